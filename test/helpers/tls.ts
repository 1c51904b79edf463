import { generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";

// A certificate authority and a server certificate for 127.0.0.1, made with node:crypto alone: the
// X.509 structures are written in DER by hand (ECDSA P-256 with SHA-256), so a test can serve HTTPS
// that a child process trusts through NODE_EXTRA_CA_CERTS.

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const tlv = (tag: number, content: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), length(content.length), content]);
const sequence = (...parts: Buffer[]): Buffer => tlv(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]): Buffer => tlv(0x31, Buffer.concat(parts));
const integer = (bytes: Buffer): Buffer => tlv(0x02, (bytes[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
const bitString = (bytes: Buffer, unusedBits = 0): Buffer => tlv(0x03, Buffer.concat([Buffer.from([unusedBits]), bytes]));
const octetString = (bytes: Buffer): Buffer => tlv(0x04, bytes);
const utf8 = (text: string): Buffer => tlv(0x0c, Buffer.from(text, "utf8"));
const explicit = (n: number, content: Buffer): Buffer => tlv(0xa0 + n, content);
const TRUE = tlv(0x01, Buffer.from([0xff]));

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split(".").map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const chunk: number[] = [];
    for (let value = arc; ; value = Math.floor(value / 128)) {
      chunk.unshift((value % 128) | (chunk.length > 0 ? 0x80 : 0));
      if (value < 128) break;
    }
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function utcTime(date: Date): Buffer {
  const pad = (n: number): string => String(n).padStart(2, "0");
  const text = `${pad(date.getUTCFullYear() % 100)}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}Z`;
  return tlv(0x17, Buffer.from(text, "ascii"));
}

const ECDSA_SHA256 = sequence(oid("1.2.840.10045.4.3.2"));
const name = (commonName: string): Buffer => sequence(set(sequence(oid("2.5.4.3"), utf8(commonName))));
const extension = (id: string, value: Buffer, critical = false): Buffer => sequence(oid(id), ...(critical ? [TRUE] : []), octetString(value));

/**
 * 16 random bytes whose first is 0x40–0x7f: positive, and never a leading zero, which DER forbids
 * (OpenSSL refused one in 512 certificates with "illegal padding").
 */
function serialNumber(): Buffer {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x3f) | 0x40;
  return bytes;
}

function certificate(options: { subject: string; issuer: string; publicKey: KeyObject; signer: KeyObject; extensions: Buffer[] }): string {
  const now = Date.now();
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))),
    integer(serialNumber()),
    ECDSA_SHA256,
    name(options.issuer),
    sequence(utcTime(new Date(now - 3600_000)), utcTime(new Date(now + 7 * 86400_000))),
    name(options.subject),
    options.publicKey.export({ type: "spki", format: "der" }),
    explicit(3, sequence(...options.extensions)),
  );
  const signature = sign("sha256", tbs, options.signer);
  const der = sequence(tbs, ECDSA_SHA256, bitString(signature));
  return `-----BEGIN CERTIFICATE-----\n${der.toString("base64").replace(/(.{64})/g, "$1\n").replace(/\n$/, "")}\n-----END CERTIFICATE-----\n`;
}

export interface TestCertificates {
  /** The authority's certificate (PEM): what NODE_EXTRA_CA_CERTS names. */
  ca: string;
  /** The server's certificate (PEM) for 127.0.0.1 and localhost, and its key. */
  cert: string;
  key: string;
}

export function makeCertificates(): TestCertificates {
  const authority = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const server = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const ca = certificate({
    subject: "Cairn test CA",
    issuer: "Cairn test CA",
    publicKey: authority.publicKey,
    signer: authority.privateKey,
    extensions: [
      extension("2.5.29.19", sequence(TRUE), true),
      // keyCertSign and cRLSign.
      extension("2.5.29.15", bitString(Buffer.from([0x06]), 1), true),
    ],
  });
  const cert = certificate({
    subject: "127.0.0.1",
    issuer: "Cairn test CA",
    publicKey: server.publicKey,
    signer: authority.privateKey,
    extensions: [
      extension("2.5.29.19", sequence(), true),
      // digitalSignature.
      extension("2.5.29.15", bitString(Buffer.from([0x80]), 7), true),
      extension("2.5.29.37", sequence(oid("1.3.6.1.5.5.7.3.1"))),
      extension("2.5.29.17", sequence(tlv(0x87, Buffer.from([127, 0, 0, 1])), tlv(0x82, Buffer.from("localhost", "ascii")))),
    ],
  });
  return { ca, cert, key: server.privateKey.export({ type: "pkcs8", format: "pem" }) as string };
}
