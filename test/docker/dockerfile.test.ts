/**
 * docker/Dockerfile and docker/compose.yaml, checked by reading them (no
 * image is built here): the HEALTHCHECK command, run as the image runs it,
 * exits 0 against a running cluster and non-zero otherwise; the stages, the
 * user and the ports are as docs/docker-and-ci.md says; and every CLUSTERSIM_*
 * variable the files set names a flag of the command it configures.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import yargs from 'yargs';
import { parse } from 'yaml';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import { upOptions } from '../../src/cli/up.js';
import { startUp } from '../e2e/cli-process.js';

const DOCKERFILE = readFileSync(fileURLToPath(new URL('../../docker/Dockerfile', import.meta.url)), 'utf8');
const COMPOSE = parse(readFileSync(fileURLToPath(new URL('../../docker/compose.yaml', import.meta.url)), 'utf8')) as {
  services: Record<
    string,
    { environment?: Record<string, string>; command?: string[]; ports?: string[]; build?: unknown; image?: string }
  >;
};

/** The instructions, continuation lines joined, comments dropped. */
const INSTRUCTIONS = DOCKERFILE.replace(/\\\n\s*/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));

const instruction = (name: string): string[] =>
  INSTRUCTIONS.filter((l) => l.startsWith(`${name} `)).map((l) => l.slice(name.length + 1).trim());

/** The HEALTHCHECK's command, in exec form. */
function healthCommand(): string[] {
  const [check] = instruction('HEALTHCHECK');
  const json = /CMD (\[.*\])$/.exec(check ?? '')?.[1];
  if (json === undefined) throw new Error(`no exec-form HEALTHCHECK CMD in ${check}`);
  return JSON.parse(json) as string[];
}

/** Runs the health check as Docker would in the image (node on PATH), with the image's environment and `env`. */
function runHealthCheck(env: Record<string, string>): Promise<number | null> {
  const [command, ...args] = healthCommand();
  expect(command).toBe('node');
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'ignore' });
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

/** The flags `clustersim up` knows. */
function upFlags(): Set<string> {
  const y = upOptions(yargs([])) as unknown as { getOptions(): { key: Record<string, unknown> } };
  return new Set(Object.keys(y.getOptions().key));
}

const flagOf = (variable: string) => variable.slice('CLUSTERSIM_'.length).toLowerCase().replace(/_/g, '-');

let running: RunningCluster | undefined;
const servers: http.Server[] = [];
afterEach(async () => {
  await running?.close();
  running = undefined;
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A ready file naming `url`, as `up --ready-file` writes it. */
function readyFile(url: string): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'ready-')), 'clustersim.url');
  writeFileSync(file, `${url}\n`);
  return file;
}

describe('the HEALTHCHECK command', () => {
  it('follows --port: exits 0 once `up` has written its ready file and its master answers, non-zero once it stopped', async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'ready-')), 'clustersim.url');
    expect(await runHealthCheck({ CLUSTERSIM_READY_FILE: file })).not.toBe(0);
    const up = await startUp(['--agents', '0', '--log-level', 'silent', '--ready-file', file]);
    // Written once the whole command serves (after the ready line, and any --with services).
    await expect.poll(() => existsSync(file), { timeout: 10_000 }).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(`${up.masterUrl}\n`);
    expect(await runHealthCheck({ CLUSTERSIM_READY_FILE: file })).toBe(0);
    expect(await up.stop('SIGTERM')).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(await runHealthCheck({ CLUSTERSIM_READY_FILE: file })).not.toBe(0);
  }, 30_000);

  it("exits 0 against a running cluster's master the ready file names", async () => {
    running = await startCluster({ port: 0, agents: 1 });
    expect(await runHealthCheck({ CLUSTERSIM_READY_FILE: readyFile(running.masterUrl) })).toBe(0);
  });

  it('exits non-zero when nothing listens, and when /health does not answer 200', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const freePort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await runHealthCheck({ CLUSTERSIM_READY_FILE: readyFile(`http://127.0.0.1:${freePort}`) })).not.toBe(0);
    const failing = http.createServer((_req, res) => res.writeHead(503).end());
    servers.push(failing);
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    const port = (failing.address() as AddressInfo).port;
    expect(await runHealthCheck({ CLUSTERSIM_READY_FILE: readyFile(`http://127.0.0.1:${port}`) })).not.toBe(0);
  });
});

describe('docker/Dockerfile', () => {
  it('builds in one stage and runs dist/ from a slim Node base as a user other than root', () => {
    const stages = instruction('FROM');
    expect(stages).toHaveLength(2);
    expect(stages[0]).toMatch(/ AS build$/);
    expect(stages[1]).toMatch(/ AS runtime$/);
    // Pinned to a release, not a moving tag.
    expect(instruction('ARG').find((a) => a.startsWith('NODE_IMAGE='))).toMatch(
      /^NODE_IMAGE=node:20\.\d+\.\d+-bookworm-slim$/,
    );
    const runtime = INSTRUCTIONS.slice(INSTRUCTIONS.findIndex((l) => l.endsWith(' AS runtime')));
    expect(runtime).toContain('COPY --from=build /app/dist ./dist');
    expect(runtime.some((l) => l.startsWith('RUN npm ci --omit=dev'))).toBe(true);
    expect(runtime.some((l) => /^COPY (src|test) /.test(l))).toBe(false);
    expect(instruction('USER')).toEqual(['node']);
    // tini as PID 1 reaps what spawned executors leave behind.
    expect(instruction('ENTRYPOINT')).toEqual(['["/usr/bin/tini", "--", "node", "dist/cli/main.js"]']);
    expect(runtime.some((l) => /apt-get install .*\btini\b/.test(l))).toBe(true);
    // The shipped scenarios and the licence are in the image.
    expect(runtime).toContain('COPY scenarios ./scenarios');
  });

  it("exposes the master's port and the agents' range from CLUSTERSIM_AGENT_PORT, and sets only flags of up", () => {
    const env = Object.fromEntries(
      instruction('ENV').flatMap((l) => l.split(/\s+/).map((kv) => kv.split('=') as [string, string])),
    );
    expect(env).toMatchObject({
      CLUSTERSIM_HOST: '0.0.0.0',
      CLUSTERSIM_ADVERTISE_HOST: 'localhost',
      CLUSTERSIM_AGENT_PORT: '5051',
      CLUSTERSIM_READY_FILE: '/tmp/clustersim.url',
    });
    const flags = upFlags();
    for (const name of Object.keys(env).filter((n) => n.startsWith('CLUSTERSIM_')))
      expect(flags.has(flagOf(name)), name).toBe(true);
    const [exposed] = instruction('EXPOSE');
    expect(exposed?.split(' ')).toEqual(['5050', '5051-5060']);
  });
});

describe('docker/compose.yaml', () => {
  it('runs clustersim with its ports published as they are, and the workflow service pointed at it by name', () => {
    const { clustersim, workflow } = COMPOSE.services;
    expect(clustersim?.ports).toEqual(['5050:5050', '5051-5053:5051-5053']);
    expect(Number(clustersim?.environment?.['CLUSTERSIM_AGENTS'])).toBe(3);
    const flags = upFlags();
    for (const name of Object.keys(clustersim?.environment ?? {})) expect(flags.has(flagOf(name)), name).toBe(true);
    expect(workflow?.command?.slice(0, 4)).toEqual(['serve', 'workflow', '--master', 'http://clustersim:5050']);
    expect(workflow?.image).toBe(clustersim?.image);
  });
});
