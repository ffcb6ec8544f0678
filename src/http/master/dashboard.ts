/**
 * The web dashboard: a small page of plain web components at `GET /` of the
 * master, its scripts and styles under `/ui/<file>`. The files live in the
 * package's `ui/` directory (beside `src/` and `dist/`, so the same relative
 * path finds them from the sources and from the build) and are read once,
 * at the first app built; only the files found there are routes, so no
 * request path reaches the file system. Nothing is fetched from elsewhere:
 * the Content-Security-Policy lets the page load and connect to its own
 * origin only.
 *
 * The page reads the cluster through the JSON endpoints (`/master/state`,
 * `/master/roles`, the operator API's `GET_TASKS`, `/sim/v1/agents`,
 * `/sim/v1/clock`), follows the trace over
 * `GET /sim/v1/events` (sim/events.ts) and drives virtual time with
 * `POST /sim/v1/advance` and `/sim/v1/run_until_idle`.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { serveMethods } from '../methods.js';

/** Where the page's files are, from `src/http/` and from `dist/http/` alike. */
export const DASHBOARD_DIR = fileURLToPath(new URL('../../../ui/', import.meta.url));

/** The URL prefix of the page's scripts and styles. */
export const DASHBOARD_ASSET_PREFIX = '/ui/';

const MEDIA_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

const CONTENT_SECURITY_POLICY =
  "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

interface Asset {
  readonly type: string;
  readonly body: Buffer;
  readonly etag: string;
}

let loaded: ReadonlyMap<string, Asset> | undefined;

/** The page's files by name (`index.html`, `dashboard.js`, ...), read once. */
export function dashboardAssets(): ReadonlyMap<string, Asset> {
  if (loaded !== undefined) return loaded;
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(DASHBOARD_DIR).sort()) {
    const type = MEDIA_TYPES[extname(name)];
    if (type === undefined) continue;
    const body = readFileSync(join(DASHBOARD_DIR, name));
    assets.set(name, { type, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
  }
  if (!assets.has('index.html')) throw new Error(`The dashboard's index.html is missing from ${DASHBOARD_DIR}`);
  loaded = assets;
  return assets;
}

/** `GET /` (the page) and `GET /ui/<file>` (each of its other files). */
export function registerDashboard(app: FastifyInstance): void {
  const assets = dashboardAssets();
  const serve = (url: string, asset: Asset): void =>
    serveMethods(app, url, ['GET', 'HEAD'], (req, reply) => sendAsset(req, reply, asset));
  for (const [name, asset] of assets) {
    if (name === 'index.html') serve('/', asset);
    else serve(`${DASHBOARD_ASSET_PREFIX}${name}`, asset);
  }
}

function sendAsset(req: FastifyRequest, reply: FastifyReply, asset: Asset): FastifyReply {
  // Revalidated on every load: a new version of the package is seen at once.
  reply.header('cache-control', 'no-cache').header('etag', asset.etag);
  reply.header('content-security-policy', CONTENT_SECURITY_POLICY).header('x-content-type-options', 'nosniff');
  if (req.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  return reply.code(200).header('content-type', asset.type).send(asset.body);
}
