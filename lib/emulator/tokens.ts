import { createHmac, randomBytes } from 'node:crypto';

/** `opaque`: random strings; `jwt`: HS256 JSON Web Tokens whose `exp` is the access token's expiry, in seconds. */
export type TokenFormat = 'opaque' | 'jwt';

interface Grant {
  username: string;
  expiresAt: number;
  /** In DPoP mode, the thumbprint of the key the token is bound to. */
  jkt?: string;
}

/**
 * The emulator's memory of what it issued: access tokens with their expiry, refresh tokens that work once, and in
 * DPoP mode the key each is bound to.
 */
export class TokenLedger {
  private readonly access = new Map<string, Grant>();
  /** Access tokens that were valid once, so a 401 can tell an expired token from an unknown one. */
  private readonly retired = new Set<string>();
  /** Refresh tokens used, revoked or expired. */
  private readonly spent = new Set<string>();
  private readonly refresh = new Map<string, Grant>();
  private readonly secret = randomBytes(32);

  constructor(
    private readonly format: TokenFormat,
    private readonly clock: () => number,
  ) {}

  /** An access token for `username`, bound to the DPoP key of thumbprint `jkt` when one is given. */
  issueAccess(username: string, ttlMs: number, jkt?: string): string {
    const expiresAt = this.clock() + ttlMs;
    const token = this.format === 'jwt' ? this.jwt(username, expiresAt) : `acc_${randomBytes(18).toString('hex')}`;
    this.access.set(token, { username, expiresAt, ...(jkt !== undefined && { jkt }) });
    return token;
  }

  /** A refresh token for `username`, bound to the DPoP key of thumbprint `jkt` when one is given. */
  issueRefresh(username: string, ttlMs: number, jkt?: string): string {
    const token = `ref_${randomBytes(24).toString('hex')}`;
    this.refresh.set(token, { username, expiresAt: this.clock() + ttlMs, ...(jkt !== undefined && { jkt }) });
    return token;
  }

  /**
   * The user an access token was issued to while it is valid, with the key it is bound to; `expired` after its life;
   * `unknown` otherwise.
   */
  checkAccess(token: string): { user: string; jkt: string | undefined } | 'expired' | 'unknown' {
    const user = this.valid(this.access, token);
    if (user !== undefined) return { user, jkt: this.access.get(token)?.jkt };
    return this.retired.has(token) ? 'expired' : 'unknown';
  }

  /** The thumbprint of the key a live refresh token is bound to; undefined when it is unbound, dead or unknown. */
  refreshKey(token: string): string | undefined {
    const grant = this.refresh.get(token);
    return grant !== undefined && this.clock() < grant.expiresAt ? grant.jkt : undefined;
  }

  /** The user an access token was issued to while it is valid, without retiring an expired one. */
  accessUser(token: string): string | undefined {
    const grant = this.access.get(token);
    return grant !== undefined && this.clock() < grant.expiresAt ? grant.username : undefined;
  }

  /** Spends a refresh token: its user, once; undefined when unknown, used or expired. */
  spendRefresh(token: string, rotate: boolean): string | undefined {
    const username = this.valid(this.refresh, token);
    if (username !== undefined && rotate) {
      this.refresh.delete(token);
      this.spent.add(token);
    }
    return username;
  }

  issued(token: string): boolean {
    return this.access.has(token) || this.retired.has(token) || this.refresh.has(token) || this.spent.has(token);
  }

  expireAccess(): void {
    for (const token of this.access.keys()) this.retired.add(token);
    this.access.clear();
  }

  /** Kills one refresh token, as a logout does; nothing happens to a token that is unknown or already dead. */
  revokeRefreshToken(token: string): void {
    if (this.refresh.delete(token)) this.spent.add(token);
  }

  revokeRefresh(): void {
    for (const token of this.refresh.keys()) this.spent.add(token);
    this.refresh.clear();
  }

  private valid(grants: Map<string, Grant>, token: string): string | undefined {
    const grant = grants.get(token);
    if (grant === undefined) return undefined;
    if (this.clock() >= grant.expiresAt) {
      grants.delete(token);
      (grants === this.access ? this.retired : this.spent).add(token);
      return undefined;
    }
    return grant.username;
  }

  private jwt(username: string, expiresAt: number): string {
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const issuedAt = Math.floor(this.clock() / 1000);
    const body = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode({ sub: username, iat: issuedAt, exp: Math.floor(expiresAt / 1000), jti: randomBytes(8).toString('hex') })}`;
    return `${body}.${createHmac('sha256', this.secret).update(body).digest('base64url')}`;
  }
}
