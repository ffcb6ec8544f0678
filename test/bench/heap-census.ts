/**
 * Where a launched task's heap goes: a cluster in virtual time, one
 * framework through HTTP, every offer accepted with `TASKS_PER_AGENT` long
 * tasks (as `scale.ts`), run; then a heap snapshot before the launch and one
 * after the tasks run are counted by object kind (V8's constructor name for
 * objects, the node type otherwise), and the growth is printed per task:
 * objects and bytes of each kind, largest first.
 *
 *   npx tsx test/bench/heap-census.ts AGENTS TASKS_PER_AGENT [TOP]
 */
import { Session } from 'node:inspector/promises';
import { collector } from './agents.js';
import { advanceUntil, clusterWithOffers, launchAll, runningTasks } from './scale.js';
import { num, table } from './stats.js';

interface Snapshot {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: string[];
      readonly node_types: [string[]];
      readonly edge_fields: string[];
      readonly edge_types: [string[]];
    };
  };
  readonly nodes: number[];
  readonly edges: number[];
  readonly strings: string[];
}

/** Objects and bytes by kind. */
async function census(): Promise<Map<string, { count: number; bytes: number }>> {
  const session = new Session();
  session.connect();
  const chunks: string[] = [];
  session.on('HeapProfiler.addHeapSnapshotChunk', (m) => chunks.push(m.params.chunk));
  await session.post('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  session.disconnect();
  const snap = JSON.parse(chunks.join('')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const [type, name, size] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const out = new Map<string, { count: number; bytes: number }>();
  const edgeCount = fields.indexOf('edge_count');
  const edgeFields = snap.snapshot.meta.edge_fields;
  const edgeTypes = snap.snapshot.meta.edge_types[0];
  const [edgeType, edgeName, toNode] = ['type', 'name_or_index', 'to_node'].map((f) => edgeFields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const nodeCount = snap.nodes.length / fields.length;
  const kinds: string[] = new Array<string>(nodeCount);
  const firstEdge = new Uint32Array(nodeCount + 1);
  for (let n = 0, edge = 0; n < nodeCount; n++) {
    const i = n * fields.length;
    firstEdge[n] = edge;
    const edges = snap.nodes[i + edgeCount]!;
    const t = types[snap.nodes[i + type]!]!;
    let kind = t === 'object' || t === 'closure' ? `${t} ${snap.strings[snap.nodes[i + name]!]}` : t;
    if (kind === 'object Object') {
      // Plain objects by their property names: which record they are.
      const names: string[] = [];
      for (let e = edge; e < edge + edges * edgeFields.length; e += edgeFields.length) {
        if (edgeTypes[snap.edges[e + edgeType]!] === 'property') names.push(snap.strings[snap.edges[e + edgeName]!]!);
      }
      kind = `{${names.filter((x) => x !== '__proto__' && x !== 'map').join(',')}}`;
    }
    kinds[n] = kind;
    edge += edges * edgeFields.length;
  }
  // Arrays, strings and hidden parts by the first object holding them (kind.edge).
  const holder: (string | undefined)[] = new Array<string | undefined>(nodeCount);
  const holderNode = new Int32Array(nodeCount).fill(-1);
  for (let n = 0; n < nodeCount; n++) {
    const edges = snap.nodes[n * fields.length + edgeCount]!;
    for (let e = firstEdge[n]!; e < firstEdge[n]! + edges * edgeFields.length; e += edgeFields.length) {
      const to = snap.edges[e + toNode]! / fields.length;
      if (holder[to] !== undefined) continue;
      const et = edgeTypes[snap.edges[e + edgeType]!];
      const en = et === 'element' || et === 'hidden' ? `[${et}]` : snap.strings[snap.edges[e + edgeName]!];
      holder[to] = `${kinds[n]!.slice(0, 60)}.${en}`;
      holderNode[to] = n;
    }
  }
  for (let n = 0; n < nodeCount; n++) {
    let kind = kinds[n]!;
    if (
      kind === 'array' ||
      kind === 'string' ||
      kind === 'concatenated string' ||
      kind === 'hidden' ||
      kind === 'object Array' ||
      kind === '{}' ||
      kind === 'number'
    ) {
      // Parts of a string chain by the record holding the chain.
      let at = n;
      while (holderNode[at]! >= 0 && kinds[holderNode[at]!] === 'concatenated string') at = holderNode[at]!;
      kind = `${kind} in ${holder[at] ?? '?'}`;
    }
    const entry = out.get(kind) ?? { count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += snap.nodes[n * fields.length + size]!;
    out.set(kind, entry);
  }
  return out;
}

async function main(): Promise<void> {
  const [agents, tasksPerAgent, top = 30] = process.argv.slice(2).map(Number);
  const gc = collector();
  const { cluster, fw } = await clusterWithOffers(agents!);
  try {
    gc();
    const before = await census();
    const launch = await launchAll(fw, fw.offers!, {
      agents: agents!,
      tasksPerAgent: tasksPerAgent!,
      concurrency: 8,
      wildcard: false,
    });
    const tasks = (fw.offers!.length - launch.refused) * tasksPerAgent!;
    advanceUntil(cluster, () => runningTasks(cluster) >= tasks, 1_000, 60_000);
    gc();
    const after = await census();
    const rows = [...after].map(([kind, a]) => {
      const b = before.get(kind) ?? { count: 0, bytes: 0 };
      return { kind, count: (a.count - b.count) / tasks, bytes: (a.bytes - b.bytes) / tasks };
    });
    rows.sort((x, y) => y.bytes - x.bytes);
    const total = rows.reduce((s, r) => s + r.bytes, 0);
    process.stdout.write(`${tasks} tasks: ${num(total)} B per task in all\n`);
    process.stdout.write(
      table(
        ['kind', 'objects/task', 'B/task'],
        rows.slice(0, top).map((r) => [r.kind, r.count.toFixed(2), r.bytes.toFixed(0)]),
      ),
    );
  } finally {
    await cluster.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
