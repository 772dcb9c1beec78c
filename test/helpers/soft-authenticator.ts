import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/**
 * A software authenticator for the API tests: an ES256 key per credential, "none" attestation,
 * and the flags and counter a test chooses. It builds exactly what a browser hands
 * @simplewebauthn/browser's callers, so the server is tested through its HTTP routes alone.
 * (The browser tests use Chromium's own virtual authenticator instead.)
 */
export class SoftAuthenticator {
  readonly credentialId = randomBytes(16);
  private readonly key: KeyObject;
  private readonly publicJwk: { x: string; y: string };
  counter = 0;

  constructor(
    private readonly origin: string,
    private readonly rpId = new URL(origin).hostname,
  ) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.key = privateKey;
    this.publicJwk = publicKey.export({ format: 'jwk' }) as { x: string; y: string };
  }

  get id(): string {
    return this.credentialId.toString('base64url');
  }

  /** navigator.credentials.create's answer to creation options. */
  register(options: { challenge: string }, { userVerified = true, origin = this.origin } = {}) {
    const clientDataJSON = this.clientData('webauthn.create', options.challenge, origin);
    const coseKey = cbor(
      new Map<number, unknown>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(this.publicJwk.x, 'base64url')],
        [-3, Buffer.from(this.publicJwk.y, 'base64url')],
      ]),
    );
    const attested = Buffer.concat([Buffer.alloc(16), u16(this.credentialId.length), this.credentialId, coseKey]);
    const authData = Buffer.concat([
      this.rpIdHash(),
      Buffer.from([flags(userVerified) | 0x40]),
      u32(this.counter),
      attested,
    ]);
    const attestationObject = cbor(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        attestationObject: attestationObject.toString('base64url'),
        transports: ['internal'],
      },
    };
  }

  /** navigator.credentials.get's answer to request options; the counter moves on by one unless told. */
  authenticate(
    options: { challenge: string },
    { userVerified = true, counter = this.counter + 1, origin = this.origin } = {},
  ) {
    this.counter = counter;
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, origin);
    const authData = Buffer.concat([this.rpIdHash(), Buffer.from([flags(userVerified)]), u32(counter)]);
    const signature = sign(
      'sha256',
      Buffer.concat([authData, createHash('sha256').update(clientDataJSON).digest()]),
      this.key,
    );
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: authData.toString('base64url'),
        signature: signature.toString('base64url'),
        userHandle: null,
      },
    };
  }

  private clientData(type: string, challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  private rpIdHash(): Buffer {
    return createHash('sha256').update(this.rpId).digest();
  }
}

/** User present always; user verified when asked. */
const flags = (userVerified: boolean) => 0x01 | (userVerified ? 0x04 : 0);
const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
};
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

/** The little of CBOR (RFC 8949) that attestation needs: integers, byte and text strings, maps. */
function cbor(value: unknown): Buffer {
  const head = (major: number, n: number): Buffer => {
    if (n < 24) return Buffer.from([(major << 5) | n]);
    if (n < 256) return Buffer.from([(major << 5) | 24, n]);
    if (n < 65536) return Buffer.concat([Buffer.from([(major << 5) | 25]), u16(n)]);
    return Buffer.concat([Buffer.from([(major << 5) | 26]), u32(n)]);
  };
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (Buffer.isBuffer(value)) return Buffer.concat([head(2, value.length), value]);
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Map) {
    return Buffer.concat([head(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])]);
  }
  throw new Error(`cbor: unsupported ${typeof value}`);
}
