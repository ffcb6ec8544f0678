/**
 * How a client's requests reach a master: over HTTP (the default, one
 * connection pool per client), or any other way that answers as the HTTP
 * API does. A cluster of this process lends one that reaches its masters'
 * apps without a socket (`RunningCluster.inProcess`): the same routes,
 * checks, codecs and event streams, without the kernel's loopback and
 * Node's HTTP parser in between.
 */
import http from 'node:http';
import { openStream, type CallResult, type ClusterClock, type StreamHandlers } from './event-queue.js';

/** A subscription's stream as a transport opened it. */
export interface OpenedStream {
  /** Resolves once the response headers arrive (a refusal with its status and body). */
  readonly answer: Promise<CallResult>;
  /** Drops the connection, as a crashed client would. */
  close(): void;
}

export interface Transport {
  /** POSTs a body; the answer whatever its status. A connection that fails rejects. */
  post(url: URL, body: string | Buffer, headers: Record<string, string>): Promise<CallResult>;
  /** POSTs a SUBSCRIBE and reads its RecordIO stream, record by record. */
  open(url: URL, body: string | Buffer, headers: Record<string, string>, on: StreamHandlers): OpenedStream;
  /** Lets go of the connections it keeps. */
  close(): void;
  /** The cluster's clock, where the transport can read it (a cluster of this process): a wait that times out says whether it moved. */
  clock?(): ClusterClock;
}

/** HTTP, keeping the connections of calls alive; a stream owns its own connection. */
export class HttpTransport implements Transport {
  readonly #agent = new http.Agent({ keepAlive: true });

  post(url: URL, body: string | Buffer, headers: Record<string, string>): Promise<CallResult> {
    return postRaw(url, body, headers, this.#agent);
  }

  open(url: URL, body: string | Buffer, headers: Record<string, string>, on: StreamHandlers): OpenedStream {
    const { request, answer } = openStream(url, headers, body, on);
    return { answer, close: () => request.destroy() };
  }

  close(): void {
    this.#agent.destroy();
  }
}

/** POSTs a body; `agent` keeps connections alive, `socketPath` goes over a Unix domain socket instead of TCP. */
export function postRaw(
  url: URL,
  body: string | Buffer,
  headers: Record<string, string>,
  agent?: http.Agent,
  socketPath?: string,
): Promise<CallResult & { readonly bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const options = {
      method: 'POST',
      headers,
      ...(agent === undefined ? {} : { agent }),
      ...(socketPath === undefined ? {} : { socketPath }),
    };
    const req = http.request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, body: bytes.toString(), headers: res.headers, bytes });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}
