/**
 * The `--credentials` and `--acls` files (src/runtime/auth-files.ts): both
 * upstream forms of credentials, paths with and without `file://`, inline
 * JSON, and the one-line refusal of what upstream would run with quietly.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAcls, loadCredentials } from '../../src/runtime/auth-files.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'clustersim-auth-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

describe('loadCredentials', () => {
  it('reads upstream JSON from a path, with or without file://, and a missing secret as empty', () => {
    const p = file(
      'creds.json',
      JSON.stringify({ credentials: [{ principal: 'a', secret: 'x' }, { principal: 'b' }] }),
    );
    const expected = new Map([
      ['a', 'x'],
      ['b', ''],
    ]);
    expect(loadCredentials(p)).toEqual({ ok: true, value: expected });
    expect(loadCredentials(`file://${p}`)).toEqual({ ok: true, value: expected });
  });

  it("reads upstream's text form, one `principal secret` a line", () => {
    const p = file('creds.txt', 'a  x\n\nb y\n');
    expect(loadCredentials(p)).toEqual({
      ok: true,
      value: new Map([
        ['a', 'x'],
        ['b', 'y'],
      ]),
    });
    const bad = file('bad.txt', 'a x\nb\n');
    expect(loadCredentials(bad)).toEqual({
      ok: false,
      error: `credentials ${bad}: Invalid credential format at line 2`,
    });
  });

  it('refuses, naming the file, what would authenticate nobody or not as meant', () => {
    const cases: [string, string][] = [
      ['', 'the file is empty'],
      ['{"credentials": [', 'not JSON: '],
      ['{"credentials": [{"principal": "a", "secrets": "x"}]}', "unknown field 'secrets' in 'credentials[0]'"],
      ['{"credentials": [{"principal": "a", "secret": 7}]}', "'credentials[0].secret' must be a string"],
      ['{"credentials": [{"principal": "a:b", "secret": "x"}]}', "principal 'a:b' contains ':'"],
      ['{"credentials": [{"principal": "a", "secret": "x:y"}]}', "the secret of 'a' contains ':'"],
      [
        '{"credentials": [{"principal": "a", "secret": "x"}, {"principal": "a", "secret": "y"}]}',
        "principal 'a' is listed twice",
      ],
      ['{"credentials": []}', 'holds no credentials'],
      ['{"credentials": {}}', "'credentials' must be a JSON array"],
      // Not a JSON object: upstream reads it as the text form.
      ['["a"]', 'Invalid credential format at line 1'],
    ];
    for (const [text, message] of cases) {
      const p = file('case.json', text);
      const loaded = loadCredentials(p);
      expect(loaded.ok, text).toBe(false);
      if (!loaded.ok) {
        expect(loaded.error.startsWith(`credentials ${p}: ${message}`), `${text} -> ${loaded.error}`).toBe(true);
        expect(loaded.error).not.toContain('\n');
      }
    }
  });
});

describe('loadAcls', () => {
  it('reads every enforced action in order, entities defaulting to SOME, a lone value as a list', () => {
    const loaded = loadAcls({
      permissive: 'false',
      register_frameworks: [
        { principals: { values: ['a'] }, roles: { values: 'dev' } },
        { principals: { type: 'ANY' }, roles: { type: 'NONE' } },
      ],
      teardown_frameworks: [{ principals: { values: ['ops'] }, framework_principals: { type: 'ANY' } }],
      update_quotas: [{ principals: { values: ['ops'] }, roles: { values: ['q/%'] } }],
      view_flags: [{ principals: { type: 'ANY' }, flags: { type: 'NONE' } }],
      run_tasks: [{ principals: { type: 'ANY' }, users: { values: ['root'] } }],
    });
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    expect(loaded.value.permissive).toBe(false);
    expect(loaded.value.registerFrameworks).toEqual([
      { principals: { type: 'SOME', values: ['a'] }, objects: { type: 'SOME', values: ['dev'] } },
      { principals: { type: 'ANY' }, objects: { type: 'NONE' } },
    ]);
    expect(loaded.value.teardownFrameworks).toEqual([
      { principals: { type: 'SOME', values: ['ops'] }, objects: { type: 'ANY' } },
    ]);
    expect(loaded.value.updateQuotas[0]!.objects).toEqual({ type: 'SOME', values: ['q/%'] });
    expect(loaded.value.viewFlags).toEqual([{ principals: { type: 'ANY' }, objects: { type: 'NONE' } }]);
    expect(loaded.value.viewTasks).toEqual([]);
    expect(loadAcls('{}')).toEqual({
      ok: true,
      value: expect.objectContaining({ permissive: true, registerFrameworks: [] }),
    });
  });

  it("reads the actions of upstream's later releases, each under its camelCase name", () => {
    const any = { type: 'ANY' };
    const loaded = loadAcls({
      reserve_resources: [{ principals: { values: ['ops'] }, roles: { values: ['dev/%'] } }],
      destroy_volumes: [{ principals: any, creator_principals: { values: ['ops'] } }],
      drain_agents: [{ principals: { values: ['ops'] }, agents: any }],
      mark_agents_gone: [{ principals: any, agents: { type: 'NONE' } }],
      resize_volumes: [{ principals: any, roles: any }],
      view_standalone_containers: [{ principals: any, users: any }],
      get_endpoints: [{ principals: any, paths: { values: ['/metrics/snapshot'] } }],
    });
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    expect(loaded.value.reserveResources[0]!.objects).toEqual({ type: 'SOME', values: ['dev/%'] });
    expect(loaded.value.destroyVolumes[0]!.objects).toEqual({ type: 'SOME', values: ['ops'] });
    expect(loaded.value.drainAgents[0]!.principals).toEqual({ type: 'SOME', values: ['ops'] });
    expect(loaded.value.markAgentsGone[0]!.objects).toEqual({ type: 'NONE' });
    expect([
      loaded.value.resizeVolumes.length,
      loaded.value.viewStandaloneContainers.length,
      loaded.value.getEndpoints.length,
    ]).toEqual([1, 1, 1]);
  });

  it('refuses misspelled actions and fields, bad types and missing entities, naming the place', () => {
    const cases: [object, string][] = [
      [
        { register_framework: [] },
        "unknown field 'register_framework' in 'the file' (did you mean 'register_frameworks'?)",
      ],
      [{ frameworks: [] }, "unknown field 'frameworks' in 'the file'"],
      [{ register_frameworks: {} }, "'register_frameworks' must be a JSON array"],
      [
        { register_frameworks: [{ principals: { type: 'ANY' }, role: { type: 'ANY' } }] },
        "unknown field 'role' in 'register_frameworks[0]' (did you mean 'roles'?)",
      ],
      [
        { view_roles: [{ principals: { type: 'ANY', value: ['x'] }, roles: { type: 'ANY' } }] },
        "unknown field 'value' in 'view_roles[0].principals' (did you mean 'values'?)",
      ],
      [
        { teardown_frameworks: [{ principals: { type: 'ANY' } }] },
        "'teardown_frameworks[0].framework_principals' is missing",
      ],
      [
        { view_roles: [{ principals: { type: 'any' }, roles: { type: 'ANY' } }] },
        '\'view_roles[0].principals.type\' must be SOME, ANY or NONE, got "any"',
      ],
      [
        { view_tasks: [{ principals: { values: [1] }, users: { type: 'ANY' } }] },
        "'view_tasks[0].principals.values[0]' must be a string",
      ],
      [
        { access_mesos_logs: [{ principals: { type: 'ANY' }, logs: { values: ['x'] } }] },
        'acls.access_mesos_logs type must be either NONE or ANY',
      ],
      [{ permissive: 'yes' }, '\'permissive\' must be true or false, got "yes"'],
      [
        { mark_agents_gone: [{ principals: { type: 'ANY' }, agents: { values: ['a1'] } }] },
        'acls.mark_agents_gone type must be either NONE or ANY',
      ],
      [{ drain_agent: [] }, "unknown field 'drain_agent' in 'the file' (did you mean 'drain_agents'?)"],
      [
        { unreserve_resources: [{ principals: { type: 'ANY' }, roles: { type: 'ANY' } }] },
        "unknown field 'roles' in 'unreserve_resources[0]' (expected 'principals', 'reserver_principals')",
      ],
      [
        { get_endpoints: [{ principals: { type: 'ANY' }, paths: { values: ['/metrics/snapshot', '/state'] } }] },
        "Path: '/state' is not an authorizable path (/containers, /containerizer/debug, /files/debug, /logging/toggle, /metrics/snapshot, /monitor/statistics)",
      ],
    ];
    for (const [json, message] of cases) {
      expect(loadAcls(json), message).toEqual({ ok: false, error: `acls (object): ${message}` });
    }
    const p = file('acls.json', '{"permissive": tru}');
    const bad = loadAcls(p);
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error.startsWith(`acls ${p}: not JSON: `)).toBe(true);
  });
});

describe('loadAcls: control_simulation', () => {
  it('reads it with objects ANY or NONE, as the actions of no object; refuses SOME', () => {
    const loaded = loadAcls({
      control_simulation: [
        { principals: { values: ['ops'] }, objects: { type: 'ANY' } },
        { principals: { type: 'ANY' }, objects: { type: 'NONE' } },
      ],
    });
    expect(loaded.ok && loaded.value.controlSimulation).toEqual([
      { principals: { type: 'SOME', values: ['ops'] }, objects: { type: 'ANY' } },
      { principals: { type: 'ANY' }, objects: { type: 'NONE' } },
    ]);
    expect(loadAcls({ control_simulation: [{ principals: { type: 'ANY' }, objects: { values: ['x'] } }] })).toEqual({
      ok: false,
      error: 'acls (object): acls.control_simulation type must be either NONE or ANY',
    });
    expect(loadAcls({ control_simulations: [] })).toEqual({
      ok: false,
      error: "acls (object): unknown field 'control_simulations' in 'the file' (did you mean 'control_simulation'?)",
    });
  });
});
