/**
 * The orchestration framework's environment: the spec's defaults, values
 * read, and every invalid value refused with the variable's name.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, masterUrl, parseSpan } from '../../src/frameworks/orchestrator/config.js';

describe('orchestrator configuration from the environment', () => {
  it('has the defaults of the spec', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      user: 'root',
      name: 'm3s',
      port: 10000,
      master: '127.0.0.1:5050',
      clusterSsl: false,
      portFrom: 31000,
      portTo: 32000,
      logLevel: 'info',
      engineCni: 'bridge',
      engineShmSize: '30gb',
      domain: '.local',
      customDomain: 'cloud.local',
      counts: { server: 1, agent: 1, datastore: 1 },
      engine: true,
      storeServer: undefined,
      skipSsl: true,
      dsPort: 3306,
      volumeDriver: 'local',
      heartbeatMs: 15_000,
      authUsername: undefined,
    });
    expect(c.resources.server).toEqual({ cpus: 0.1, mem: 1200, disk: undefined });
    expect(c.resources.agent).toEqual({ cpus: 0.1, mem: 1200, disk: undefined });
    expect(c.name).toContain('m3s');
    expect(masterUrl(c)).toBe('http://127.0.0.1:5050');
  });

  it('reads every kind of value', () => {
    const c = loadConfig({
      FRAMEWORK_NAME: 'orch-a',
      FRAMEWORK_PORT: '10500',
      CLUSTER_MASTER: 'leader.example:5051',
      CLUSTER_SSL: 'true',
      ORCH_AGENT_COUNT: '4',
      ORCH_AGENT_CPU: '0.5',
      ORCH_SERVER_MEM: '2048',
      ORCH_AGENT_LABELS: '[{"key":"traefik.enable","value":"true"}]',
      ORCH_SERVER_CONSTRAINT: 'node-1',
      DS_CPU: '1',
      DS_DISK: '5000',
      HEARTBEAT_INTERVAL: '500ms',
      STORE_SERVER: '10.0.0.2:6380',
      AUTH_USERNAME: 'u',
      AUTH_PASSWORD: 'p',
      LOGLEVEL: 'debug',
    });
    expect(c).toMatchObject({
      name: 'orch-a',
      port: 10500,
      counts: { agent: 4 },
      heartbeatMs: 500,
      storeServer: '10.0.0.2:6380',
      logLevel: 'debug',
    });
    expect(c.resources.agent.cpus).toBe(0.5);
    expect(c.resources.server.mem).toBe(2048);
    expect(c.resources.datastore).toEqual({ cpus: 1, mem: 1200, disk: 5000 });
    expect(c.agentLabels).toEqual([{ key: 'traefik.enable', value: 'true' }]);
    expect(c.constraints).toEqual({ server: 'node-1', agent: undefined, datastore: undefined });
    expect(masterUrl(c)).toBe('https://leader.example:5051');
    expect(parseSpan('15s')).toBe(15_000);
    expect(parseSpan('1.5m')).toBe(90_000);
    expect(parseSpan('2')).toBe(2_000);
  });

  const bad: [string, string][] = [
    ['FRAMEWORK_PORT', '70000'],
    ['FRAMEWORK_PORT', 'ten'],
    ['CLUSTER_SSL', 'maybe'],
    ['CLUSTER_MASTER', 'no port here'],
    ['PORTRANGE_FROM', '-1'],
    ['LOGLEVEL', 'verbose'],
    ['ORCH_SERVER_CPU', '0'],
    ['ORCH_AGENT_MEM', 'lots'],
    ['ORCH_AGENT_COUNT', '1.5'],
    ['ORCH_AGENT_COUNT', '-2'],
    ['ORCH_AGENT_LABELS', '{"key":"a"}'],
    ['ORCH_AGENT_LABELS', '[{"key":"a"}]'],
    ['ORCH_ENGINE', 'docker'],
    ['STORE_SERVER', 'redis'],
    ['DS_PORT', '0'],
    ['DS_MEM', '-5'],
    ['HEARTBEAT_INTERVAL', 'soon'],
    ['HEARTBEAT_INTERVAL', '0s'],
    ['SKIP_SSL', 'perhaps'],
    ['SSL_CRT_BASE64', 'not base64!'],
    ['FRAMEWORK_NAME', 'a name:with spaces'],
  ];
  it.each(bad)('refuses %s=%s naming the variable', (name, value) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(name);
    expect((error as Error).message).toMatch(new RegExp(`^${name}: `));
  });

  it('refuses a port range that ends below its start, and half of the API credentials', () => {
    expect(() => loadConfig({ PORTRANGE_FROM: '32000', PORTRANGE_TO: '31000' })).toThrow(/^PORTRANGE_TO: /);
    expect(() => loadConfig({ AUTH_USERNAME: 'u' })).toThrow(/^AUTH_PASSWORD: /);
    expect(() => loadConfig({ AUTH_PASSWORD: 'p' })).toThrow(/^AUTH_USERNAME: /);
  });
});
