//! A small ASN.1 TLV tree for the differential tests: parse DER (descending
//! into OCTET STRINGs that hold DER, such as eContent), edit the tree, and
//! re-emit it with the enclosing lengths computed from what is written, so
//! one mutation (a length, an order, a BER form, trailing bytes) leaves the
//! rest of the structure well formed.

/// How a node's length is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Len {
    /// Minimal definite length (DER).
    Der,
    /// Definite length off by this much from the content actually written.
    Delta(i64),
    /// Definite long form with this many length bytes (non-minimal when
    /// shorter would do).
    Long(u8),
    /// BER indefinite length, closed by an end-of-contents 00 00.
    Indefinite,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// Primitive content.
    Prim(Vec<u8>),
    /// Constructed content.
    Cons(Vec<Node>),
    /// A primitive OCTET STRING whose content is DER (eContent, extension
    /// values, the ECDSA signature).
    Wrapped(Vec<Node>),
    /// Bytes written as they are, with no header (trailing garbage).
    Raw(Vec<u8>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub tag: u8,
    pub len: Len,
    pub body: Body,
}

impl Node {
    pub fn prim(tag: u8, content: &[u8]) -> Node {
        Node {
            tag,
            len: Len::Der,
            body: Body::Prim(content.to_vec()),
        }
    }

    pub fn raw(bytes: &[u8]) -> Node {
        Node {
            tag: 0,
            len: Len::Der,
            body: Body::Raw(bytes.to_vec()),
        }
    }

    /// The children of a constructed or wrapped node.
    pub fn kids(&self) -> &[Node] {
        match &self.body {
            Body::Cons(k) | Body::Wrapped(k) => k,
            _ => &[],
        }
    }

    pub fn kids_mut(&mut self) -> &mut Vec<Node> {
        match &mut self.body {
            Body::Cons(k) | Body::Wrapped(k) => k,
            _ => panic!("node {:#04x} has no children", self.tag),
        }
    }

    pub fn is_constructed(&self) -> bool {
        matches!(self.body, Body::Cons(_))
    }
}

/// Parses a concatenation of DER elements that covers `data` exactly.
pub fn parse(data: &[u8]) -> Option<Vec<Node>> {
    parse_all(data, 0)
}

fn parse_all(data: &[u8], depth: usize) -> Option<Vec<Node>> {
    if depth > 24 {
        return None;
    }
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let (node, used) = parse_one(&data[pos..], depth)?;
        out.push(node);
        pos += used;
    }
    Some(out)
}

fn parse_one(data: &[u8], depth: usize) -> Option<(Node, usize)> {
    let tag = *data.first()?;
    let first = *data.get(1)?;
    if tag & 0x1f == 0x1f || first == 0x80 || first > 0x84 {
        return None;
    }
    let (hl, len) = if first < 0x80 {
        (2, first as usize)
    } else {
        let n = (first & 0x7f) as usize;
        let bytes = data.get(2..2 + n)?;
        (
            2 + n,
            bytes.iter().fold(0usize, |a, b| (a << 8) | *b as usize),
        )
    };
    let content = data.get(hl..hl + len)?;
    let body = if tag & 0x20 != 0 {
        Body::Cons(parse_all(content, depth + 1)?)
    } else if tag == 0x04 && content.first() == Some(&0x30) {
        match parse_all(content, depth + 1) {
            Some(k) => Body::Wrapped(k),
            None => Body::Prim(content.to_vec()),
        }
    } else {
        Body::Prim(content.to_vec())
    };
    Some((
        Node {
            tag,
            len: Len::Der,
            body,
        },
        hl + len,
    ))
}

fn push_len(out: &mut Vec<u8>, len: usize) {
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes: Vec<u8> = len
            .to_be_bytes()
            .iter()
            .copied()
            .skip_while(|b| *b == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
}

/// Writes the nodes, each with its `len` form; enclosing lengths are those
/// of the bytes actually written.
pub fn emit(nodes: &[Node]) -> Vec<u8> {
    let mut out = Vec::new();
    for n in nodes {
        emit_node(n, &mut out);
    }
    out
}

fn emit_node(n: &Node, out: &mut Vec<u8>) {
    let content = match &n.body {
        Body::Prim(b) => b.clone(),
        Body::Raw(b) => {
            out.extend(b);
            return;
        }
        Body::Cons(k) | Body::Wrapped(k) => emit(k),
    };
    out.push(n.tag);
    match n.len {
        Len::Der => push_len(out, content.len()),
        Len::Delta(d) => push_len(out, (content.len() as i64 + d).max(0) as usize),
        Len::Long(k) => {
            out.push(0x80 | k);
            let be = (content.len() as u64).to_be_bytes();
            out.extend(&be[8 - k as usize..]);
        }
        Len::Indefinite => {
            out.push(0x80);
            out.extend(&content);
            out.extend([0, 0]);
            return;
        }
    }
    out.extend(content);
}

/// Every node's path (child indices from the top-level list), depth first.
pub fn paths(nodes: &[Node]) -> Vec<Vec<usize>> {
    fn walk(nodes: &[Node], prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        for (i, n) in nodes.iter().enumerate() {
            prefix.push(i);
            out.push(prefix.clone());
            walk(n.kids(), prefix, out);
            prefix.pop();
        }
    }
    let mut out = Vec::new();
    walk(nodes, &mut Vec::new(), &mut out);
    out
}

pub fn get<'a>(nodes: &'a [Node], path: &[usize]) -> &'a Node {
    let mut n = &nodes[path[0]];
    for i in &path[1..] {
        n = &n.kids()[*i];
    }
    n
}

pub fn get_mut<'a>(nodes: &'a mut [Node], path: &[usize]) -> &'a mut Node {
    let mut n = &mut nodes[path[0]];
    for i in &path[1..] {
        n = &mut n.kids_mut()[*i];
    }
    n
}

/// Applies `f` to every node at or under `path` that is not inside a
/// wrapped OCTET STRING (whose bytes are signed content).
pub fn for_each_outside_wrapped(node: &mut Node, f: &mut dyn FnMut(&mut Node)) {
    f(node);
    if let Body::Cons(k) = &mut node.body {
        for c in k {
            for_each_outside_wrapped(c, f);
        }
    }
}

/// "a.b.c" for a path.
pub fn show_path(path: &[usize]) -> String {
    path.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(".")
}
