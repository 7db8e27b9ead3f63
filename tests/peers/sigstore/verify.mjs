#!/usr/bin/env node
// Offline verification of a Sigstore bundle with the Sigstore JavaScript
// libraries (@sigstore/bundle, @sigstore/verify), used by vouch's tests as an
// independent peer. No network: the public key and the time-stamp authority
// are given on the command line; no transparency log is required.
//
// Usage:
//   node verify.mjs --bundle B.json --key PUB.pem
//                   (--tsa-chain CHAIN.pem | --trusted-root TRUSTED_ROOT.json)
//                   [--hint HINT] [--artifact FILE]
//
//   --tsa-chain     PEM certificates of the TSA, signer first, root last
//   --trusted-root  a Sigstore TrustedRoot JSON (its timestampAuthorities)
//   --hint          require the bundle's publicKey.hint to equal HINT
//   --artifact      also require sha256(FILE) among the in-toto subjects
//                   (this script's own check, like cosign --check-claims)
//
// Prints one line. Exit 0: verified; 1: verification failed; 2: usage error.

import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import crypto from 'node:crypto';

const require = createRequire(import.meta.url);
const { bundleFromJSON } = require('@sigstore/bundle');
const { Verifier, toSignedEntity, toTrustMaterial } = require('@sigstore/verify');
const { TrustedRoot } = require('@sigstore/protobuf-specs');

function usage(msg) {
  console.log(`USAGE: ${msg}`);
  process.exit(2);
}

function parseArgs(argv) {
  const known = new Set(['--bundle', '--key', '--tsa-chain', '--trusted-root', '--hint', '--artifact']);
  const out = {};
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i];
    if (!known.has(k)) usage(`unknown argument ${k}`);
    if (i + 1 >= argv.length) usage(`${k} needs a value`);
    if (out[k] !== undefined) usage(`${k} given twice`);
    out[k] = argv[i + 1];
  }
  if (!out['--bundle'] || !out['--key']) usage('--bundle and --key are required');
  if (!out['--tsa-chain'] === !out['--trusted-root']) {
    usage('give exactly one of --tsa-chain and --trusted-root');
  }
  return out;
}

function read(path, what) {
  try {
    return readFileSync(path);
  } catch (e) {
    usage(`cannot read ${what} ${path}: ${e.message}`);
  }
}

function pemCertificates(text) {
  const re = /-----BEGIN CERTIFICATE-----([^-]+)-----END CERTIFICATE-----/g;
  return [...text.matchAll(re)].map((m) => Buffer.from(m[1].replace(/\s+/g, ''), 'base64'));
}

function trustedRootFromChain(pem) {
  const certs = pemCertificates(pem);
  if (certs.length === 0) usage('--tsa-chain holds no certificate');
  let start;
  try {
    start = new Date(new crypto.X509Certificate(certs[0]).validFrom).toISOString();
  } catch (e) {
    usage(`--tsa-chain: ${e.message}`);
  }
  return {
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    tlogs: [],
    certificateAuthorities: [],
    ctlogs: [],
    timestampAuthorities: [
      {
        subject: {},
        uri: '',
        certChain: { certificates: certs.map((c) => ({ rawBytes: c.toString('base64') })) },
        validFor: { start },
      },
    ],
  };
}

const args = parseArgs(process.argv.slice(2));

let publicKey;
try {
  publicKey = crypto.createPublicKey(read(args['--key'], 'key'));
} catch (e) {
  usage(`--key is not a public key: ${e.message}`);
}

let rootJSON;
if (args['--tsa-chain']) {
  rootJSON = trustedRootFromChain(read(args['--tsa-chain'], 'TSA chain').toString('utf8'));
} else {
  try {
    rootJSON = JSON.parse(read(args['--trusted-root'], 'trusted root').toString('utf8'));
  } catch (e) {
    usage(`--trusted-root is not JSON: ${e.message}`);
  }
}

let trustMaterial;
try {
  const root = TrustedRoot.fromJSON(rootJSON);
  if (root.timestampAuthorities.length === 0) usage('the trusted root has no timestampAuthorities');
  trustMaterial = toTrustMaterial(root, (hint) => {
    if (args['--hint'] !== undefined && hint !== args['--hint']) {
      throw new Error(`key hint ${JSON.stringify(hint)} is not ${JSON.stringify(args['--hint'])}`);
    }
    return { publicKey, validFor: () => true };
  });
} catch (e) {
  usage(`trust material: ${e.message}`);
}

const bundleText = read(args['--bundle'], 'bundle').toString('utf8');
const artifact = args['--artifact'] ? read(args['--artifact'], 'artifact') : undefined;

try {
  const bundle = bundleFromJSON(JSON.parse(bundleText));
  const entity = toSignedEntity(bundle);
  const verifier = new Verifier(trustMaterial, {
    tlogThreshold: 0,
    ctlogThreshold: 0,
    timestampThreshold: 1,
  });
  verifier.verify(entity);
  const times = entity.timestamps
    .filter((t) => t.$case === 'timestamp-authority')
    .map((t) => t.timestamp.signingTime.toISOString());
  if (artifact) {
    const env = bundle.content.dsseEnvelope;
    const statement = JSON.parse(Buffer.from(env.payload).toString('utf8'));
    const digest = crypto.createHash('sha256').update(artifact).digest('hex');
    const subjects = Array.isArray(statement.subject) ? statement.subject : [];
    if (!subjects.some((s) => s && s.digest && s.digest.sha256 === digest)) {
      throw new Error(`artifact sha256 ${digest} is not among the statement's subjects`);
    }
  }
  console.log(
    `OK: ${bundle.mediaType} ${publicKey.asymmetricKeyType} key, TSA time ${times.join(',')}`
  );
  process.exit(0);
} catch (e) {
  const code = e && e.code ? `${e.code}: ` : '';
  console.log(`FAIL: ${code}${e && e.message ? e.message : String(e)}`.replace(/\s+/g, ' '));
  process.exit(1);
}
