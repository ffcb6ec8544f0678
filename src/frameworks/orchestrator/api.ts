/**
 * The framework's HTTP API on `FRAMEWORK_PORT`, under `/api/framework/v0/`
 * and, for the plugin users already have, the same under `/api/m3s/v0/`
 * (with its names: `status/m3s`, `status/k8s`, `etcd/scale`, and the
 * `cluster/shutdown|start|restart` calls). Repeated slashes in a path (the
 * plugin writes `//api/m3s/v0/...`) are served as the clean path. With
 * `AUTH_USERNAME`/`AUTH_PASSWORD` every request must carry them as HTTP
 * Basic credentials (401 otherwise).
 */
import http from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { OrchConfig, Part } from './config.js';
import type { Orchestrator } from './framework.js';
import { kubeconfig } from './kubeconfig.js';
import { nodeName } from './tasks.js';

export interface Reply {
  readonly status: number;
  readonly type: 'application/json' | 'text/plain' | 'application/yaml';
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
}

const json = (value: unknown, status = 200): Reply => ({
  status,
  type: 'application/json',
  body: `${JSON.stringify(value)}\n`,
});
const text = (status: number, line: string): Reply => ({ status, type: 'text/plain', body: `${line}\n` });

/** Everything a request may ask of the framework. */
export interface ApiTarget {
  readonly config: OrchConfig;
  /** The framework, once subscribed. */
  readonly orchestrator: Orchestrator | undefined;
  /** PEM of the orchestrated cluster's certificate authority. */
  readonly authority: string;
}

const PREFIXES = ['/api/framework/v0/', '/api/m3s/v0/'];
const SCALABLE: Readonly<Record<string, Part>> = {
  server: 'server',
  agent: 'agent',
  datastore: 'datastore',
  etcd: 'datastore',
  manager: 'server',
};

function authorized(config: OrchConfig, header: string | undefined): boolean {
  if (config.authUsername === undefined) return true;
  const match = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (match === null) return false;
  const given = Buffer.from(Buffer.from(match[1]!, 'base64').toString('utf8'));
  const wanted = Buffer.from(`${config.authUsername}:${config.authPassword}`);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/** Answers one request: method, path (with its query), Authorization header. */
export async function answer(
  target: ApiTarget,
  method: string,
  rawPath: string,
  authorization: string | undefined,
): Promise<Reply> {
  const path = rawPath.split('?')[0]!.replace(/\/{2,}/g, '/');
  const prefix = PREFIXES.find((p) => path.startsWith(p));
  if (prefix === undefined) return text(404, `No such path: ${path}`);
  if (!authorized(target.config, authorization)) {
    return { ...text(401, 'Unauthorized'), headers: { 'www-authenticate': `Basic realm="${target.config.name}"` } };
  }
  const o = target.orchestrator;
  if (o === undefined) return text(503, 'The framework has not subscribed to the master yet');
  const route = path.slice(prefix.length).replace(/\/$/, '');
  const [first, second, third, ...rest] = route.split('/');
  if (rest.length > 0) return text(404, `No such path: ${path}`);
  const wantMethod = first === 'cluster' ? 'PUT' : 'GET';
  if (method !== wantMethod && !(method === 'HEAD' && wantMethod === 'GET'))
    return { ...text(405, `Method ${method} not allowed; use ${wantMethod}`), headers: { allow: wantMethod } };
  if (first !== undefined && SCALABLE[first] !== undefined && second === 'scale')
    return scale(o, SCALABLE[first], third);
  if (third !== undefined) return text(404, `No such path: ${path}`);
  return route2(target, o, `${first}/${second ?? ''}`, path);
}

async function scale(o: Orchestrator, part: Part, count: string | undefined): Promise<Reply> {
  if (count === undefined)
    return json({ Scale: o.wanted[part], Running: o.live(part).filter((t) => t.state === 'TASK_RUNNING').length });
  if (!/^[0-9]+$/.test(count) || !Number.isSafeInteger(Number(count)))
    return text(400, `Invalid count ${JSON.stringify(decoded(count))}: expected a non-negative integer`);
  const previous = o.wanted[part];
  await o.scale(part, Number(count));
  return json({ Scale: Number(count), Previous: previous });
}

/** A path segment as it reads decoded, or as it was sent when its escapes decode to nothing. */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

async function route2(target: ApiTarget, o: Orchestrator, route: string, path: string): Promise<Reply> {
  switch (route) {
    case 'status/framework':
    case 'status/m3s':
      return json({
        Server: o.stateOf('server'),
        Agent: o.stateOf('agent'),
        Datastore: o.stateOf('datastore'),
        API: 'ok',
      });
    case 'status/k8s':
      return json(nodes(o));
    case 'server/config': {
      const address = o.address('server');
      if (address === undefined) return text(503, 'No server task is running yet');
      return {
        status: 200,
        type: 'application/yaml',
        body: kubeconfig(target.config.name, target.authority, address, target.config.token),
      };
    }
    case 'server/version':
      return version(o);
    case 'cluster/shutdown':
      await o.setActive(false);
      return json({ Cluster: 'shutdown' });
    case 'cluster/start':
      await o.setActive(true);
      return json({ Cluster: 'start' });
    case 'cluster/restart':
      await o.restart();
      return json({ Cluster: 'restart' });
    default:
      return text(404, `No such path: ${path}`);
  }
}

/** The orchestrated cluster's nodes: each server and agent task with its host and state. */
function nodes(o: Orchestrator): Record<string, unknown> {
  const items = (['server', 'agent'] as const).flatMap((part) =>
    o.live(part).map((t) => ({
      name: nodeName(o.config, t),
      role: part,
      task_id: t.taskId,
      hostname: t.hostname,
      state: t.state,
    })),
  );
  const ready =
    items.length > 0 &&
    items.every((n) => n.state === 'TASK_RUNNING') &&
    items.filter((n) => n.role === 'agent').length === o.wanted.agent;
  return { Ready: ready, Nodes: items };
}

/** The server's version: its image's tag, once a server task runs. */
function version(o: Orchestrator): Reply {
  const image = o.config.images.orch;
  const at = image.lastIndexOf(':');
  const tag = at > image.lastIndexOf('/') ? image.slice(at + 1) : 'latest';
  const address = o.address('server');
  if (address === undefined) return text(503, 'No server task is running yet');
  return json({ gitVersion: tag, image, server: address });
}

/** An HTTP server answering the API. */
export function createApiServer(target: () => ApiTarget): http.Server {
  return http.createServer((req, res) => {
    answer(target(), req.method ?? 'GET', req.url ?? '/', req.headers.authorization)
      .catch((e: Error) => text(500, e.message.split('\n')[0]!))
      .then((reply) => {
        res.writeHead(reply.status, { 'content-type': reply.type, ...reply.headers });
        res.end(req.method === 'HEAD' ? undefined : reply.body);
      });
  });
}
