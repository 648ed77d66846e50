// Certificates for the mutual-TLS interop tests (RFC 8705), made in the test's own process with WebCrypto and
// @peculiar/x509: nothing is read from disk or from a CLI, so a fresh clone needs only `npm ci`. Each run makes new
// keys; nothing here is a secret anyone else holds.
// @peculiar/x509 registers its parsers through tsyringe, which needs the Reflect metadata API before it loads; in jest,
// what this adds to Reflect stays in the test file's own globals.
import 'reflect-metadata';
import { createHash, X509Certificate, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

/** A key and its certificate, both PEM, as `https.createServer` and `https.Agent` take them. */
export interface KeyAndCertificate {
  /** The private key, PKCS#8 PEM. */
  key: string;
  cert: string;
}

/** A client's certificate, with what the provider and the resource server check it by. */
export interface ClientCertificate extends KeyAndCertificate {
  /**
   * Its subject as RFC 4514 writes it, the last RDN first (`CN=<name>,O=…`): what a client registers as
   * `tls_client_auth_subject_dn`, and what {@link subjectDnOf} reads from the certificate.
   */
  subjectDn: string;
  /** RFC 8705 §3.1: the base64url SHA-256 of its DER, what a bound token carries as `cnf["x5t#S256"]`. */
  thumbprint: string;
}

/** What the TLS tests run on: one CA, a server certificate for 127.0.0.1 and client certificates it issued. */
export interface TestCertificates {
  /** The CA's certificate, PEM: what the servers trust client certificates by, and the clients the servers by. */
  ca: string;
  /** For a server on 127.0.0.1 (an IP subjectAltName, which Node's check of the server's identity needs). */
  server: KeyAndCertificate;
  /** The certificate of each name asked for (subject `O=axios-token-keeper interop`, `CN=<name>`), issued by the CA. */
  clients: Record<string, ClientCertificate>;
}

const ORGANISATION = 'axios-token-keeper interop';
// P-256: a key is made in a millisecond, where RSA 2048 takes a hundred on a busy machine.
const KEY_ALGORITHM: EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };
const SIGNING_ALGORITHM: EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };
const DAY_MS = 86_400_000;

/**
 * A certificate's subject as RFC 4514 writes it: its RDNs from the last to the first, joined by commas (Node lists them
 * first to last, one a line). The names made here need no escaping.
 */
export function subjectDnOf(pem: string): string {
  return new X509Certificate(pem).subject.split('\n').reverse().join(',');
}

/** The base64url SHA-256 of a certificate's DER (RFC 8705 §3.1), from its PEM. */
export function certificateThumbprint(pem: string): string {
  return createHash('sha256').update(new X509Certificate(pem).raw).digest('base64url');
}

/**
 * A CA, a server certificate for 127.0.0.1 and one client certificate per name in `clientNames`, all valid from a day
 * ago (so that a clock a little behind accepts them) for a week.
 */
export async function makeCertificates(clientNames: readonly string[]): Promise<TestCertificates> {
  // Passed to every call rather than set as @peculiar/x509's global provider: nothing here outlives the call.
  const crypto = webcrypto as unknown as Crypto;
  const notBefore = new Date(Date.now() - DAY_MS);
  const notAfter = new Date(Date.now() + 7 * DAY_MS);
  const caKeys = await newKeys(crypto);
  // @peculiar/x509 writes a name's RDNs in the order given: the organisation first, as certificates usually have it.
  const caName = `O=${ORGANISATION},CN=Interop test CA`;
  const ca = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serial(),
      name: caName,
      notBefore,
      notAfter,
      keys: caKeys,
      signingAlgorithm: SIGNING_ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey, false, crypto),
      ],
    },
    crypto,
  );

  /** A certificate the CA issues to `subject`, for the one use `usage` says. */
  async function issue(
    subject: string,
    usage: x509.ExtendedKeyUsage,
    extra: x509.Extension[],
  ): Promise<KeyAndCertificate> {
    const keys = await newKeys(crypto);
    const cert = await x509.X509CertificateGenerator.create(
      {
        serialNumber: serial(),
        subject,
        issuer: ca.subject,
        notBefore,
        notAfter,
        publicKey: keys.publicKey,
        signingKey: caKeys.privateKey,
        signingAlgorithm: SIGNING_ALGORITHM,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
          new x509.ExtendedKeyUsageExtension([usage], false),
          await x509.AuthorityKeyIdentifierExtension.create(ca, false, crypto),
          ...extra,
        ],
      },
      crypto,
    );
    return { key: await pkcs8Pem(crypto, keys.privateKey), cert: cert.toString('pem') };
  }

  const server = await issue(`O=${ORGANISATION},CN=127.0.0.1`, x509.ExtendedKeyUsage.serverAuth, [
    new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: '127.0.0.1' }], false),
  ]);
  const clients: Record<string, ClientCertificate> = {};
  for (const name of clientNames) {
    const issued = await issue(`O=${ORGANISATION},CN=${name}`, x509.ExtendedKeyUsage.clientAuth, []);
    clients[name] = { ...issued, subjectDn: subjectDnOf(issued.cert), thumbprint: certificateThumbprint(issued.cert) };
  }
  return { ca: ca.toString('pem'), server, clients };
}

function newKeys(crypto: Crypto): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify']);
}

/** A positive serial number of 16 random bytes (RFC 5280 §4.1.2.2): the top bit cleared, so it reads positive. */
function serial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = bytes[0]! & 0x7f;
  return Buffer.from(bytes).toString('hex');
}

async function pkcs8Pem(crypto: Crypto, key: CryptoKey): Promise<string> {
  const der = Buffer.from(await crypto.subtle.exportKey('pkcs8', key)).toString('base64');
  return `-----BEGIN PRIVATE KEY-----\n${der.match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`;
}
