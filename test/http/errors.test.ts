/**
 * The error catalogue (src/http/errors.ts) against the error list of
 * docs/scheduler-api.md, the core's codes, and the routes that must send
 * through it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/core/model/errors.js';
import { callError, httpError, HTTP_ERRORS, MAX_ERROR_TEXT_CHARS, type HttpErrorCode } from '../../src/http/errors.js';
import { buildMasterApp } from '../../src/http/master/app.js';
import { Cluster } from '../../src/core/cluster.js';
import { VirtualDriver } from '../../src/runtime/driver.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CODES = Object.keys(HTTP_ERRORS) as HttpErrorCode[];

interface ReadmeRow {
  readonly status: number;
  readonly code: string;
  readonly when: string;
}

/**
 * The page's error section: from the paragraph that opens it to the one
 * about broken subscription connections, which follows it.
 */
function readmeErrorSection(): string {
  const readme = readFileSync(join(ROOT, 'docs', 'scheduler-api.md'), 'utf8');
  const start = readme.indexOf('Errors are plain text');
  const end = readme.indexOf('A broken subscription connection', start);
  expect(start, 'the error section of docs/scheduler-api.md opens with "Errors are plain text"').toBeGreaterThanOrEqual(
    0,
  );
  expect(
    end,
    'the error section of docs/scheduler-api.md is followed by "A broken subscription connection"',
  ).toBeGreaterThan(start);
  return readme.slice(start, end);
}

/** Rows `| 400 | \`CODE\` | when |` of the section's table, header and rule excluded. */
function readmeRows(section: string): ReadmeRow[] {
  const rows = section.split('\n').filter((line) => line.startsWith('|'));
  expect(rows.slice(0, 2)).toEqual(['| status | error | when |', '|---|---|---|']);
  return rows.slice(2).map((line) => {
    const m = /^\| (\d{3}) \| `([A-Z_]+)` \| (.+) \|$/.exec(line);
    expect(m, `docs/scheduler-api.md error row: ${line}`).not.toBeNull();
    return { status: Number(m![1]), code: m![2]!, when: m![3]!.trim() };
  });
}

describe('the error catalogue and docs/scheduler-api.md', () => {
  const section = readmeErrorSection();
  const rows = readmeRows(section);

  it('lists every code of the table once, in the table order, with its status', () => {
    expect(rows.map((r) => r.code)).toEqual(CODES);
    for (const row of rows) {
      expect(row.status, row.code).toBe(HTTP_ERRORS[row.code as HttpErrorCode].status);
      expect(row.when, row.code).not.toBe('');
    }
  });

  it('names no status the table cannot send', () => {
    const sent = new Set<number>(CODES.map((c) => HTTP_ERRORS[c].status));
    const named = [...section.matchAll(/\b[1-5]\d\d\b/g)].map((m) => Number(m[0]));
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((status) => !sent.has(status))).toEqual([]);
  });

  it('quotes the fixed texts it shows as the table writes them', () => {
    expect(section).toContain(`\`${httpError('FRAMEWORK_NOT_FOUND').body}\``);
    expect(section).toContain(`\`${httpError('FRAMEWORK_NOT_SUBSCRIBED').body}\``);
    expect(section).toContain(`\`${httpError('CALL_INVALID', '…').body}\``);
  });
});

describe('the error catalogue', () => {
  it('gives every entry a 4xx or 5xx status and a one-line text', () => {
    for (const code of CODES) {
      expect(HTTP_ERRORS[code].status, code).toBeGreaterThanOrEqual(400);
      expect(HTTP_ERRORS[code].status, code).toBeLessThan(600);
    }
    expect(httpError('CALL_REFUSED', 'first\r\n  second\nthird').body).toBe('first second third');
  });

  it('writes the upstream texts byte for byte', () => {
    expect(httpError('METHOD_NOT_ALLOWED', ['POST'], 'PUT')).toEqual({
      code: 'METHOD_NOT_ALLOWED',
      status: 405,
      body: "405 Method Not Allowed. Expecting one of { 'POST' }, but received 'PUT'.",
    });
    expect(httpError('METHOD_NOT_ALLOWED', ['GET', 'HEAD'], 'TRACE').body).toBe(
      "405 Method Not Allowed. Expecting one of { 'GET', 'HEAD' }, but received 'TRACE'.",
    );
    expect(httpError('CONTENT_TYPE_UNSUPPORTED', ['application/json', 'application/x-protobuf']).body).toBe(
      "Expecting 'Content-Type' of application/json or application/x-protobuf",
    );
    expect(httpError('NOT_ACCEPTABLE', ['application/json', 'application/x-protobuf']).body).toBe(
      "Expecting 'Accept' to allow 'application/x-protobuf' or 'application/json'",
    );
    expect(httpError('STREAM_ID_MISMATCH', 's-1', 'f-1').body).toBe(
      "The stream ID 's-1' included in this request didn't match the stream ID currently associated with framework ID f-1",
    );
    expect(httpError('NOT_IMPLEMENTED').body).toBe('501 Not Implemented.');
    expect(httpError('NOT_FOUND').body).toBe('404 Not Found.');
    expect(httpError('INTERNAL').body).toBe('500 Internal Server Error.');
  });

  it('cuts every reason to MAX_ERROR_TEXT_CHARS, the last an ellipsis, whatever the detail echoes', () => {
    expect(MAX_ERROR_TEXT_CHARS).toBe(300);
    const exact = 'x'.repeat(MAX_ERROR_TEXT_CHARS);
    expect(httpError('CALL_REFUSED', exact).body).toBe(exact);
    const long = httpError('CALL_INVALID', 'y'.repeat(1_000_000)).body;
    expect(long).toBe(`Failed to validate scheduler::Call: ${'y'.repeat(MAX_ERROR_TEXT_CHARS - 37)}…`);
    expect(long).toHaveLength(MAX_ERROR_TEXT_CHARS);
    // Lines folded first, so the cut counts what is sent.
    expect(httpError('BODY_UNDECODABLE', `a\n${'b'.repeat(400)}`).body).toBe(
      `a ${'b'.repeat(MAX_ERROR_TEXT_CHARS - 3)}…`,
    );
    // A surrogate pair is never split: the cut falls before it.
    const emoji = httpError('CALL_REFUSED', `${'z'.repeat(MAX_ERROR_TEXT_CHARS - 2)}😀😀`).body;
    expect(emoji).toBe(`${'z'.repeat(MAX_ERROR_TEXT_CHARS - 2)}…`);
  });

  it('folds a megabyte of whitespace in linear time', () => {
    const started = Date.now();
    const body = httpError('BODY_UNDECODABLE', `a${' '.repeat(1_000_000)}\nb`).body;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(body).toHaveLength(MAX_ERROR_TEXT_CHARS);
    expect(body.endsWith('…')).toBe(true);
  });

  it('maps every core error code to an entry', () => {
    // A Record over ErrorCode: a code added to the core and not listed here fails to compile.
    const expected: Record<ErrorCode, readonly [HttpErrorCode, number]> = {
      INVALID: ['CALL_REFUSED', 400],
      FRAMEWORK_NOT_FOUND: ['FRAMEWORK_NOT_FOUND', 403],
      FRAMEWORK_NOT_SUBSCRIBED: ['FRAMEWORK_NOT_SUBSCRIBED', 403],
      STREAM_ID: ['STREAM_ID_MISSING', 400],
      FORBIDDEN: ['FORBIDDEN', 403],
      NOT_IMPLEMENTED: ['NOT_IMPLEMENTED', 501],
      NOT_FOUND: ['TARGET_NOT_FOUND', 404],
      CONFLICT: ['CONFLICT', 409],
      UNAVAILABLE: ['UNAVAILABLE', 503],
      FAILED: ['CALL_FAILED', 500],
    };
    for (const [code, [entry, status]] of Object.entries(expected) as [ErrorCode, readonly [HttpErrorCode, number]][]) {
      const error = callError({ code, message: 'm' }, { frameworkId: 'f-1', streamId: undefined });
      expect([error.code, error.status], code).toEqual([entry, status]);
    }
    const wrong = callError({ code: 'STREAM_ID', message: 'm' }, { frameworkId: 'f-1', streamId: 's-1' });
    expect(wrong).toEqual(httpError('STREAM_ID_MISMATCH', 's-1', 'f-1'));
    expect(
      callError({ code: 'INVALID', message: "Role '' is invalid" }, { frameworkId: 'f', streamId: 's' }).body,
    ).toBe("Role '' is invalid");
    expect(callError({ code: 'FORBIDDEN', message: '' }, { frameworkId: 'f', streamId: 's' }).body).toBe(
      '403 Forbidden.',
    );
  });

  it('is the only place in src/http that writes an error status or text', () => {
    const dir = join(ROOT, 'src', 'http');
    const offenders: string[] = [];
    const files = (readdirSync(dir, { recursive: true }) as string[]).filter(
      (f) => f.endsWith('.ts') && f !== 'errors.ts',
    );
    expect(files.length).toBeGreaterThan(30);
    for (const file of files) {
      readFileSync(join(dir, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const literalStatus = /\.(?:code|status|writeHead)\(\s*[45]\d\d\b/.test(line);
          const untypedError = /sendError\([^,]+,\s*(?:\d|['"`][^A-Z])/.test(line);
          if (literalStatus || untypedError) offenders.push(`src/http/${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });
});

describe('errors fastify raises before a route runs', () => {
  it('answers a Content-Type that is no media type with CONTENT_TYPE_MALFORMED, and closes', async () => {
    const cluster = new Cluster({ master: { hostname: '127.0.0.1', ip: '127.0.0.1', port: 0, version: 'test' } });
    const app = buildMasterApp({ driver: new VirtualDriver(cluster) });
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/scheduler',
      headers: { 'content-type': 'json' },
      payload: '{}',
    });
    const expected = httpError('CONTENT_TYPE_MALFORMED');
    expect([res.statusCode, res.body]).toEqual([expected.status, expected.body]);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers.connection).toBe('close');
    await app.close();
  });
});
