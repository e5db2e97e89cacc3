// DxApp: the app's own view (its JWT): installations, and clients of its installations whose
// access tokens are minted on demand and refreshed a minute before they expire.
import { signAppJwt, type PrivateKeyInput } from './app-jwt.js';
import { DxClient, CLIENT_VERSION } from './client.js';
import { apiBaseOf, parseApiTimestamp, Transport, type FetchLike } from './http.js';
import { TokenCache } from './tokens.js';
import type { ClientToken, Installation, Me } from './types.js';

export interface DxAppOptions {
  /** The service: `http://host:8080` or `http://host:8080/api/v1`. */
  baseUrl: string;
  /** The app's platformAppId. */
  appId: string;
  /** The app's private key (PEM), as `dx apps create --key-out` wrote it. */
  privateKey: PrivateKeyInput;
  /** The key's id (`kid`), when the app has several keys. */
  keyId?: string;
  /** The `aud` claim, for a service configured with JWT_AUDIENCE. */
  audience?: string;
  /** Default: the platform's fetch. */
  fetch?: FetchLike;
  /** Clock in epoch milliseconds (tests pass a fake one). */
  now?: () => number;
  /** How long before `expiresAt` an access token is replaced; default 60 s. */
  refreshBeforeMs?: number;
  userAgent?: string;
}

export interface InstallationOptions {
  /** Narrows the token (e.g. `['datasets:read']`); default every permission. */
  permissions?: string[];
}

/** App JWTs live 5 minutes and are signed again a minute before they lapse. */
const JWT_TTL_SECONDS = 300;

/** The app, authenticated by its JWT. */
export class DxApp {
  private readonly http: Transport;
  private readonly now: () => number;
  private readonly tokens: TokenCache;
  private readonly keys = new Map<
    string,
    { installationId: number; workspaceKey: string; permissions: string[] }
  >();
  private jwtCache: { jwt: string; expiresAt: number } | null = null;

  constructor(private readonly options: DxAppOptions) {
    this.now = options.now ?? Date.now;
    this.http = new Transport(
      apiBaseOf(options.baseUrl),
      options.fetch ?? ((input, init) => fetch(input, init)),
      (stale) => this.jwt(stale),
      options.userAgent ?? `dataset-exchange-client/${CLIENT_VERSION}`,
    );
    this.tokens = new TokenCache({
      now: this.now,
      ...(options.refreshBeforeMs !== undefined ? { refreshBeforeMs: options.refreshBeforeMs } : {}),
      mint: async (key) => {
        const which = this.keys.get(key);
        if (which === undefined) throw new Error(`no installation ${key} was opened`);
        const minted = await this.clientToken(which.installationId, which.workspaceKey, which.permissions);
        return { token: minted.token, expiresAt: parseApiTimestamp(minted.expiresAt) };
      },
    });
  }

  /** A current app JWT (signed anew a minute before the last one lapses). */
  async jwt(stale?: string): Promise<string> {
    const cached = this.jwtCache;
    if (cached !== null && cached.jwt !== stale && this.now() < cached.expiresAt - 60_000) return cached.jwt;
    const issuedAt = Math.floor(this.now() / 1000);
    const jwt = await signAppJwt({
      appId: this.options.appId,
      privateKey: this.options.privateKey,
      ttlSeconds: JWT_TTL_SECONDS,
      issuedAt,
      ...(this.options.keyId !== undefined ? { keyId: this.options.keyId } : {}),
      ...(this.options.audience !== undefined ? { audience: this.options.audience } : {}),
    });
    this.jwtCache = { jwt, expiresAt: (issuedAt + JWT_TTL_SECONDS) * 1000 };
    return jwt;
  }

  /** The app's installations (its own workspace's included). */
  async installations(): Promise<Installation[]> {
    return (await this.http.json<{ data: Installation[] }>('GET', '/apps/me/installations')).data;
  }

  /** Connects the app to a workspace with its ID and Workspace Key (idempotent). */
  connectInstallation(workspaceId: number, workspaceKey: string): Promise<Installation> {
    return this.http.json('POST', '/apps/me/installations', { json: { workspaceId, workspaceKey } });
  }

  /** The app as the service sees it. */
  me(): Promise<Me> {
    return this.http.json('GET', '/auth/me');
  }

  /** Mints an access token for an installation (uncached: `installation()` caches). */
  clientToken(
    installationId: number,
    workspaceKey: string,
    permissions: string[] = [],
  ): Promise<ClientToken> {
    return this.http.json('POST', '/auth/clientToken', {
      json: { tokenType: 'appInstallation', installationId, workspaceKey, permissions },
    });
  }

  /**
   * A client of the installation: its access token is minted at the first request, reused, and
   * replaced a minute before `expiresAt` (or at once when the service refuses it).
   */
  installation(installationId: number, workspaceKey: string, options: InstallationOptions = {}): DxClient {
    const permissions = [...(options.permissions ?? [])].sort();
    const key = `${installationId}:${permissions.join(',')}`;
    this.keys.set(key, { installationId, workspaceKey, permissions });
    return new DxClient({
      baseUrl: this.options.baseUrl,
      accessToken: (stale) => this.tokens.get(key, stale),
      fetch: this.http.fetch,
      ...(this.options.userAgent !== undefined ? { userAgent: this.options.userAgent } : {}),
    });
  }
}
