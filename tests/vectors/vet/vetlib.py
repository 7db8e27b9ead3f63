"""Helpers shared by the fixture data modules (see make_fixtures.py)."""

import base64

FAMILIES = (
    "injection",
    "steering",
    "concealment",
    "exfiltration",
    "credentials",
    "secret_field",
    "hidden_unicode",
    "encoded_blob",
)

FIXTURES = []


def P(typ, desc=None, **kw):
    """One JSON Schema property: P("string", "what it is", enum=[...])."""
    d = {"type": typ}
    if desc is not None:
        d["description"] = desc
    d.update(kw)
    return d


def T(name, desc, props=None, req=None, title=None, ann=None, **extra):
    """A tool definition as a server lists it (tools/list entry)."""
    t = {"name": name}
    if title is not None:
        t["title"] = title
    t["description"] = desc
    schema = {"type": "object", "properties": {}}
    for k, v in (props or {}).items():
        schema["properties"][k] = P("string", v) if isinstance(v, str) else v
    if req:
        schema["required"] = list(req)
    t["inputSchema"] = schema
    if ann is not None:
        t["annotations"] = ann
    t.update(extra)
    return t


RO = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}
RO_OPEN = {"readOnlyHint": True, "openWorldHint": True}
DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True}


def _add(prefix, label, family, lang, source, note, tool=None, instructions=None, near=None):
    assert (tool is None) != (instructions is None)
    n = 1 + sum(1 for f in FIXTURES if f["id"].startswith(prefix + "-"))
    fx = {
        "id": "%s-%03d" % (prefix, n),
        "label": label,
        "family": family,
    }
    if near is not None:
        assert near in FAMILIES, near
        fx["near"] = near
    fx["split"] = None  # assigned by make_fixtures.py
    fx["lang"] = lang
    fx["source"] = source
    fx["note"] = note
    if tool is not None:
        fx["tool"] = tool
    else:
        fx["instructions"] = instructions
    FIXTURES.append(fx)
    return fx


_PREFIX = {
    "injection": "p-inj",
    "steering": "p-ste",
    "concealment": "p-con",
    "exfiltration": "p-exf",
    "credentials": "p-cre",
    "secret_field": "p-sec",
    "hidden_unicode": "p-uni",
    "encoded_blob": "p-enc",
}


def poisoned(family, note, tool=None, instructions=None, lang="en", source="authored"):
    assert family in FAMILIES, family
    return _add(_PREFIX[family], "poisoned", family, lang, source, note, tool, instructions)


def benign(group, note, tool=None, instructions=None, lang="en", source="authored", near=None):
    return _add("b-" + group, "benign", None, lang, source, note, tool, instructions, near)


# --- hidden-character builders --------------------------------------------

def tags(s):
    """ASCII text as Unicode tag characters (U+E0000 + code point): invisible."""
    return "".join(chr(0xE0000 + ord(c)) for c in s)


def tagged(s):
    """Tag text framed as the tag-sequence smuggling attacks do (BEGIN/CANCEL)."""
    return "\U000e0001" + tags(s) + "\U000e007f"


def zw(s, ch="\u200b", every=2):
    """Inserts an invisible character every `every` letters inside words."""
    out = []
    run = 0
    for c in s:
        if c.isalnum():
            if run and run % every == 0:
                out.append(ch)
            run += 1
        else:
            run = 0
        out.append(c)
    return "".join(out)


def fullwidth(s):
    return "".join(chr(ord(c) - 0x21 + 0xFF01) if "!" <= c <= "~" else ("\u3000" if c == " " else c) for c in s)


def math_bold(s):
    out = []
    for c in s:
        if "A" <= c <= "Z":
            out.append(chr(0x1D400 + ord(c) - ord("A")))
        elif "a" <= c <= "z":
            out.append(chr(0x1D41A + ord(c) - ord("a")))
        elif "0" <= c <= "9":
            out.append(chr(0x1D7CE + ord(c) - ord("0")))
        else:
            out.append(c)
    return "".join(out)


def math_sans(s):
    out = []
    for c in s:
        if "A" <= c <= "Z":
            out.append(chr(0x1D5A0 + ord(c) - ord("A")))
        elif "a" <= c <= "z":
            out.append(chr(0x1D5BA + ord(c) - ord("a")))
        else:
            out.append(c)
    return "".join(out)


_CYR = {"a": "\u0430", "e": "\u0435", "o": "\u043e", "p": "\u0440", "c": "\u0441",
        "x": "\u0445", "y": "\u0443", "i": "\u0456", "s": "\u0455", "j": "\u0458",
        "A": "\u0410", "E": "\u0415", "O": "\u041e", "P": "\u0420", "C": "\u0421",
        "H": "\u041d", "K": "\u041a", "M": "\u041c", "T": "\u0422", "B": "\u0412", "I": "\u0406"}


def cyr(s, letters="aeoc"):
    """Replaces the given Latin letters of s by their Cyrillic look-alikes."""
    return "".join(_CYR[c] if c in letters and c in _CYR else c for c in s)


def variation_selectors(s):
    """Bytes of s as variation selectors (U+FE00-FE0F, U+E0100-E01EF): the
    "emoji smuggling" encoding; invisible after the base character."""
    out = []
    for b in s.encode():
        out.append(chr(0xFE00 + b) if b < 16 else chr(0xE0100 + b - 16))
    return "".join(out)


def b64(s):
    return base64.b64encode(s.encode()).decode()


def b64url(s):
    return base64.urlsafe_b64encode(s.encode()).decode().rstrip("=")


def hexs(s):
    return s.encode().hex()
