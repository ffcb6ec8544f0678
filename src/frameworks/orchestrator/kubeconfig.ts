/**
 * The client configuration file of the orchestrated cluster (`server/config`):
 * YAML with a cluster entry holding the certificate authority's data and the
 * server's address (the agent host of the server task and its dynamic
 * port), a user and a context. The certificate authority is `SSL_CRT_BASE64`
 * when given; otherwise the framework makes a self-signed one (P-256) on its
 * first start and keeps it in the store, so the file stays the same across
 * restarts.
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { stringify } from 'yaml';

/** DER: a tag, its length, its content. */
function der(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const n = body.length;
  const length =
    n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), length, body]);
}

const seq = (...c: Buffer[]): Buffer => der(0x30, ...c);
const oid = (bytes: number[]): Buffer => der(0x06, Buffer.from(bytes));
/** 1.2.840.10045.4.3.2, ecdsa-with-SHA256. */
const ECDSA_SHA256 = seq(oid([0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02]));
/** 2.5.4.3, commonName. */
const CN = [0x55, 0x04, 0x03];
/** 2.5.29.19, basicConstraints. */
const BASIC_CONSTRAINTS = [0x55, 0x1d, 0x13];

function name(commonName: string): Buffer {
  return seq(der(0x31, seq(oid(CN), der(0x0c, Buffer.from(commonName, 'utf8')))));
}

/** GeneralizedTime of a date. */
function time(date: Date): Buffer {
  const text = date
    .toISOString()
    .replace(/[-:T]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return der(0x18, Buffer.from(text, 'ascii'));
}

export interface CertificateAuthority {
  /** PEM of the certificate. */
  readonly cert: string;
  /** PEM of its private key (PKCS#8). */
  readonly key: string;
}

/** A self-signed CA certificate (ten years) named `commonName`, with a new P-256 key. */
export function makeAuthority(commonName: string, now: Date): CertificateAuthority {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  const until = new Date(now.getTime() + 10 * 365 * 86_400_000);
  const extensions = der(
    0xa3,
    seq(seq(oid(BASIC_CONSTRAINTS), der(0x01, Buffer.from([0xff])), der(0x04, seq(der(0x01, Buffer.from([0xff])))))),
  );
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([2]))),
    der(0x02, serial),
    ECDSA_SHA256,
    name(commonName),
    seq(time(now), time(until)),
    name(commonName),
    publicKey.export({ type: 'spki', format: 'der' }),
    extensions,
  );
  const signature = sign('sha256', tbs, privateKey);
  const certificate = seq(tbs, ECDSA_SHA256, der(0x03, Buffer.from([0]), signature));
  const pem = `-----BEGIN CERTIFICATE-----\n${certificate.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
  return { cert: pem, key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/** Checks that a PEM private key parses (SSL_KEY_BASE64). */
export function checkKey(pem: string): void {
  createPrivateKey(pem);
}

/** The YAML client configuration for a server at `https://<address>`. */
export function kubeconfig(clusterName: string, authorityPem: string, serverAddress: string, token: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: clusterName,
        cluster: {
          'certificate-authority-data': Buffer.from(authorityPem).toString('base64'),
          server: `https://${serverAddress}`,
        },
      },
    ],
    contexts: [{ name: clusterName, context: { cluster: clusterName, user: clusterName } }],
    'current-context': clusterName,
    preferences: {},
    users: [{ name: clusterName, user: { token } }],
  });
}
