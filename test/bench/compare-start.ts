/**
 * One side of the `compare` start part, run in a fresh process per round:
 * `tsx compare-start.ts <dist/index.js> <runs>` starts a cluster of 3 agents
 * `runs` times from that build and prints, as one JSON line on stdout, the
 * milliseconds until `startCluster()` resolved and until a scheduler that
 * subscribed as soon as it did read its first OFFERS event.
 *
 * It must run against builds of earlier commits, so it uses only what every
 * release has: `startCluster` from the package's entry, and the scheduler
 * API spoken over plain HTTP (JSON, RecordIO), not the project's client,
 * whose interface has changed over time.
 */
import http from 'node:http';
import { pathToFileURL } from 'node:url';

export interface StartSample {
  readonly resolveMs: number[];
  readonly offersMs: number[];
}

interface Cluster {
  readonly masterUrl: string;
  close(): Promise<void>;
}
type StartFn = (options: Record<string, unknown>) => Promise<Cluster>;

const SUBSCRIBE = JSON.stringify({
  type: 'SUBSCRIBE',
  subscribe: { framework_info: { user: 'bench', name: 'bench' } },
});

/**
 * Reads RecordIO frames (`<length>\n<JSON>`) from a byte stream and calls
 * `onEvent` with each event's type. Lengths count bytes, so it keeps bytes.
 */
export function recordIoReader(onEvent: (type: string) => void): (chunk: Buffer) => void {
  let buffered = Buffer.alloc(0);
  return (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      const newline = buffered.indexOf(10);
      if (newline < 0) return;
      const length = Number(buffered.subarray(0, newline).toString('latin1'));
      if (!Number.isInteger(length)) throw new Error(`bad RecordIO length '${buffered.subarray(0, newline)}'`);
      if (buffered.length < newline + 1 + length) return;
      const record = buffered.subarray(newline + 1, newline + 1 + length).toString('utf8');
      buffered = buffered.subarray(newline + 1 + length);
      onEvent((JSON.parse(record) as { type?: string }).type ?? '');
    }
  };
}

/** Subscribes and resolves when the first OFFERS event arrives; the returned request is then destroyed. */
function untilOffers(masterUrl: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      new URL('/api/v1/scheduler', masterUrl),
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
      },
      (response) => {
        if (response.statusCode !== 200) {
          reject(new Error(`SUBSCRIBE answered ${response.statusCode}`));
          request.destroy();
          return;
        }
        const read = recordIoReader((type) => {
          if (type !== 'OFFERS') return;
          request.destroy();
          resolve();
        });
        response.on('data', (chunk: Buffer) => read(chunk));
        response.on('end', () => reject(new Error('the event stream ended before an OFFERS event')));
      },
    );
    request.on('error', (error) => reject(error));
    request.end(SUBSCRIBE);
  });
}

async function measure(startCluster: StartFn, runs: number): Promise<StartSample> {
  const sample: StartSample = { resolveMs: [], offersMs: [] };
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const cluster = await startCluster({ port: 0, agents: 3, seed: 1, time: 'realtime' });
    const t1 = performance.now();
    try {
      await untilOffers(cluster.masterUrl);
      sample.offersMs.push(performance.now() - t0);
      sample.resolveMs.push(t1 - t0);
    } finally {
      await cluster.close();
    }
  }
  return sample;
}

async function main(): Promise<void> {
  const [entry, runsText] = process.argv.slice(2);
  const runs = Number(runsText);
  if (entry === undefined || !Number.isInteger(runs) || runs <= 0)
    throw new Error('usage: compare-start.ts <dist/index.js> <runs>');
  const library = (await import(pathToFileURL(entry).href)) as { startCluster?: StartFn };
  if (typeof library.startCluster !== 'function') throw new Error(`${entry} exports no startCluster`);
  const sample = await measure(library.startCluster, runs);
  process.stdout.write(`${JSON.stringify(sample)}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  });
}
