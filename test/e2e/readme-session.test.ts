/**
 * The curl session of docs/scheduler-api.md, run as printed: `clustersim up` as a child
 * process on a free port (the session's `npm start`), the subscription left
 * running in the background as the page says, each other command through
 * `bash -c` once what the page shows before it has appeared, and every
 * answer compared with the page's (see readme-session.ts for the rules).
 * A changed id, uuid, length or status, or a command that no longer works,
 * fails it. The same session runs again in virtual time, as the page's
 * paragraph on it says: the same answers, once the clock is advanced.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startUp, type UpProcess } from './cli-process.js';
import {
  findRecords,
  linesMatch,
  localCommand,
  normalised,
  receivedRecords,
  sessionSteps,
  shownRecords,
  startFlags,
  type Step,
  type StreamRecord,
} from './readme-session.js';

const PAGE = fileURLToPath(new URL('../../docs/scheduler-api.md', import.meta.url));
const STREAM_WAIT_MS = 30_000;

interface Background {
  readonly child: ChildProcess;
  readonly out: () => Buffer;
  headersMatched: boolean;
  /** Index of the first record not yet matched by a block of the page. */
  next: number;
}

const running: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const stop of running.splice(0).reverse()) await stop();
});

function runCommand(command: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile('bash', ['-c', command], { timeout: 20_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr }),
    ),
  );
}

function startBackground(command: string): Background {
  // Its own process group, so that stopping it stops curl too.
  const child = spawn('bash', ['-c', command], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
  const chunks: Buffer[] = [];
  child.stdout!.on('data', (c: Buffer) => chunks.push(c));
  running.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        return; // it ended meanwhile
      }
      await exited;
    }
  });
  return { child, out: () => Buffer.concat(chunks), headersMatched: false, next: 0 };
}

function splitResponse(out: Buffer): { headers: string[] | undefined; body: Buffer } {
  const end = out.indexOf('\r\n\r\n');
  if (end < 0) return { headers: undefined, body: Buffer.alloc(0) };
  return { headers: out.subarray(0, end).toString('latin1').split('\r\n'), body: out.subarray(end + 4) };
}

/** Waits until the stream shows what the block shows (headers first, if the block has them). */
async function expectOnStream(bg: Background, step: Step, port: number): Promise<void> {
  const blank = step.text.indexOf('\n\n');
  const hasHeaders = step.text.startsWith('HTTP/');
  const headers = hasHeaders ? step.text.slice(0, blank < 0 ? undefined : blank).split('\n') : [];
  const shown = shownRecords(hasHeaders ? (blank < 0 ? '' : step.text.slice(blank + 2)) : step.text);
  const deadline = Date.now() + STREAM_WAIT_MS;
  let why = '';
  for (;;) {
    const { headers: got, body } = splitResponse(bg.out());
    if (got === undefined) why = 'no response headers yet';
    else if (!linesMatch(headers, got)) why = `headers ${JSON.stringify(got)} are not ${JSON.stringify(headers)}`;
    else {
      const found = findRecords(shown, receivedRecords(body), bg.next, port);
      if ('next' in found) {
        bg.next = found.next;
        return;
      }
      why = found.missing;
    }
    if (Date.now() > deadline || bg.child.exitCode !== null) {
      throw new Error(
        `docs/scheduler-api.md line ${step.line}: ${why}${bg.child.exitCode !== null ? ` (the stream ended, exit ${bg.child.exitCode})` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the curl session of docs/scheduler-api.md', () => {
  const steps = sessionSteps(readFileSync(PAGE, 'utf8'));

  it('is there: a start, a stream left running, commands and what they answer', () => {
    expect(steps[0]?.kind).toBe('start');
    expect(steps.filter((s) => s.kind === 'start')).toHaveLength(1);
    expect(steps.filter((s) => s.kind === 'background')).toHaveLength(1);
    expect(steps.filter((s) => s.kind === 'run').length).toBeGreaterThanOrEqual(4);
    expect(steps.filter((s) => s.kind === 'stream').length).toBeGreaterThanOrEqual(3);
    expect(steps.filter((s) => s.kind === 'virtual')).toHaveLength(1);
    for (const [i, s] of steps.entries())
      if (s.kind === 'output') expect(['run', 'background']).toContain(steps[i - 1]?.kind);
  });

  it('answers as the page says, command by command', { timeout: 120_000 }, async () => {
    await runSession(steps, { virtual: false });
  });

  it(
    "gives the same ids and uuids in virtual time, with the page's advance before the task's end",
    { timeout: 120_000 },
    async () => {
      const received = await runSession(steps, { virtual: true });
      const stamps = received.flatMap((r) => [...r.text.matchAll(/"timestamp":([0-9.]+)/g)].map((m) => Number(m[1])));
      expect(stamps.length).toBeGreaterThanOrEqual(3);
      for (const t of stamps) expect(t >= 1_700_000_000 && t < 1_700_000_060, `timestamp ${t}`).toBe(true);
    },
  );
});

/**
 * Runs the session's steps, in virtual time with `--time virtual` added to
 * the start and the `virtual` step run just before the last `stream` block
 * (in real time it is left out); answers the records received.
 */
async function runSession(steps: readonly Step[], mode: { virtual: boolean }): Promise<StreamRecord[]> {
  const flags = [...startFlags(steps[0]!.text), ...(mode.virtual ? ['--time', 'virtual'] : []), '--log-level', 'warn'];
  const up: UpProcess = await startUp(flags);
  running.push(() => up.stop());
  const origin = up.masterUrl;
  const port = Number(new URL(origin).port);
  const lastStream = steps.findLastIndex((s) => s.kind === 'stream');
  let bg: Background | undefined;
  let last: { code: number; stdout: string; stderr: string } | undefined;
  for (const [i, step] of steps.entries()) {
    const where = `docs/scheduler-api.md line ${step.line}`;
    if (i === lastStream && mode.virtual) {
      for (const v of steps.filter((s) => s.kind === 'virtual')) {
        const moved = await runCommand(localCommand(v.text, origin));
        expect(moved.stdout, `docs/scheduler-api.md line ${v.line}: ${moved.stderr}`).toContain('"mode":"virtual"');
      }
    }
    if (step.kind === 'start' || step.kind === 'virtual') {
      if (i !== 0 && step.kind === 'start') throw new Error(`${where}: a second start`);
    } else if (step.kind === 'background') {
      bg = startBackground(localCommand(step.text, origin));
      last = undefined;
    } else if (step.kind === 'run') {
      last = await runCommand(localCommand(step.text, origin));
      expect(last.code, `${where}: ${last.stderr}`).toBe(0);
    } else if (step.kind === 'output' && last !== undefined) {
      const lines = last.stdout.replace(/\r/g, '').split('\n');
      expect(linesMatch(step.text.split('\n'), lines), `${where}: printed\n${last.stdout}`).toBe(true);
    } else {
      expect(bg, `${where}: a stream block before any background command`).toBeDefined();
      await expectOnStream(bg!, step, port);
    }
  }
  return receivedRecords(splitResponse(bg!.out()).body);
}

describe('the README', () => {
  it('subscribes, in its first tour, with the command of the session it links to', () => {
    const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
    const subscribe = sessionSteps(readFileSync(PAGE, 'utf8')).find((s) => s.kind === 'background')?.text;
    expect(subscribe).toBeDefined();
    expect(readme).toContain(`\`\`\`sh\n${subscribe!}\n\`\`\``);
    expect(readme).toContain('](docs/scheduler-api.md#a-session-with-curl)');
  });
});

describe('comparing an answer with the page', () => {
  const startingShown = `359\n{"type":"UPDATE","update":{"status":{"state":"TASK_STARTING","timestamp":1795424627.178,"uuid":"iP32EoRFDzsxkduqLAbyrA=="}}}`;
  const received = (text: string) => Buffer.from(`${Buffer.byteLength(text)}\n${text}`);
  const actual =
    '{"type":"UPDATE","update":{"status":{"state":"TASK_STARTING","timestamp":1795424701.5,"uuid":"iP32EoRFDzsxkduqLAbyrA=="}}}';

  it('reads the lengths and records curl prints, and a RecordIO body', () => {
    expect(shownRecords('20\n{"type":"HEARTBEAT"}9\n{"a":"…"}')).toEqual([
      { length: 20, text: '{"type":"HEARTBEAT"}' },
      { length: 9, text: '{"a":"…"}' },
    ]);
    expect(receivedRecords(Buffer.from('20\n{"type":"HEARTBEAT"}9\n{"a":'))).toEqual([
      { length: 20, text: '{"type":"HEARTBEAT"}' },
    ]);
    expect(() => receivedRecords(Buffer.from('{"type":"HEARTBEAT"}\n'))).toThrow(/not a record length/);
  });

  it('takes the timestamps and the master port as they come, and nothing else', () => {
    const shown = shownRecords(startingShown.replace('359', String(Buffer.byteLength(startingShown.split('\n')[1]!))));
    expect(findRecords(shown, receivedRecords(received(actual)), 0, 5050)).toEqual({ next: 1 });
    const otherUuid = actual.replace('iP32EoRF', 'iP32EoRG');
    expect(findRecords(shown, receivedRecords(received(otherUuid)), 0, 5050)).toHaveProperty('missing');
    const longer = { length: shown[0]!.length + 1, text: shown[0]!.text };
    expect(findRecords([longer], receivedRecords(received(actual)), 0, 5050)).toHaveProperty('missing');
    expect(normalised({ length: 30, text: '{"port":41234,"pid":"m@127.0.0.1:41234"}' }, 41234)).toEqual({
      length: 28,
      text: '{"port":5050,"pid":"m@127.0.0.1:5050"}',
    });
  });

  it('needs the lines shown in order, the first one first, … standing for anything', () => {
    expect(linesMatch(['HTTP/1.1 202 Accepted'], ['HTTP/1.1 202 Accepted', 'content-length: 0'])).toBe(true);
    expect(linesMatch(['HTTP/1.1 202 Accepted'], ['HTTP/1.1 400 Bad Request'])).toBe(false);
    expect(linesMatch(['HTTP/1.1 200 OK', 'Date: …'], ['HTTP/1.1 200 OK', 'a: b', 'Date: Mon'])).toBe(true);
    expect(linesMatch(['{"state":"TASK_FINISHED",…}'], ['{"state":"TASK_RUNNING","x":1}'])).toBe(false);
  });

  it('keeps every command on the master under test', () => {
    expect(localCommand('curl http://127.0.0.1:5050/tasks', 'http://127.0.0.1:40000')).toBe(
      'curl http://127.0.0.1:40000/tasks',
    );
    expect(() => localCommand('curl http://example.com/x', 'http://127.0.0.1:40000')).toThrow(
      /names http:\/\/example.com/,
    );
    expect(startFlags('npm start -- --time virtual')).toEqual(['--time', 'virtual']);
    expect(() => startFlags('clustersim up')).toThrow();
    expect(() => sessionSteps('<!-- readme-session: runn -->\n```sh\ncurl x\n```\n')).toThrow(
      /unknown session block 'runn'/,
    );
  });
});
