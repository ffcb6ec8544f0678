/** The workflow service's `[cluster]` configuration: every key, its defaults, and errors that name the key. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CONFIG,
  loadWorkflowConfig,
  masterUrlsOf,
  parseWorkflowConfig,
} from '../../../src/frameworks/workflow/config.js';

const FULL = `
[core]
executor = avmesos_airflow_provider.executors.mesos_executor.MesosExecutor

[cluster]
cluster_ssl = False
master = 10.0.0.1:5050
framework_name = Workflow
checkpoint = True
failover_timeout = 3600
command_shell = false
task_cpu = 0.5
task_memory = 512
task_disk = 2000
authenticate = true
default_principal = wf
default_secret = s3cret
engine_image_slave = example/runtime:2
engine_volume_driver = local
engine_volume_dag_name = dags
engine_volume_dag_container_path = /workflow/dags/
engine_volume_logs_name = logs
engine_volume_logs_container_path = /workflow/logs/
engine_sock = /var/run/engine.sock
engine_user_group_id = 999
engine_network_mode = bridge
engine_environment = [{"name": "MODE", "value": "test"}, "LEVEL=info"]
api_username = api
api_password = pw
operator_api_url = http://localhost:11001/
cluster_attributes = ["workflow:true", "zone:a"]
`;

describe('workflow configuration', () => {
  it('reads every key of the [cluster] section', () => {
    const result = parseWorkflowConfig(FULL);
    expect(result).toEqual({
      ok: true,
      config: {
        clusterSsl: false,
        master: '10.0.0.1:5050',
        frameworkName: 'Workflow',
        checkpoint: true,
        failoverTimeoutSeconds: 3600,
        commandShell: false,
        taskCpus: 0.5,
        taskMemoryMib: 512,
        taskDiskMib: 2000,
        authenticate: true,
        defaultPrincipal: 'wf',
        defaultSecret: 's3cret',
        engineImageSlave: 'example/runtime:2',
        engineVolumeDriver: 'local',
        engineVolumeDagName: 'dags',
        engineVolumeDagContainerPath: '/workflow/dags/',
        engineVolumeLogsName: 'logs',
        engineVolumeLogsContainerPath: '/workflow/logs/',
        engineSock: '/var/run/engine.sock',
        engineUserGroupId: '999',
        engineNetworkMode: 'BRIDGE',
        engineEnvironment: [
          { name: 'MODE', value: 'test' },
          { name: 'LEVEL', value: 'info' },
        ],
        apiUsername: 'api',
        apiPassword: 'pw',
        operatorApiUrl: 'http://localhost:11001',
        clusterAttributes: ['workflow:true', 'zone:a'],
      },
    });
  });

  it('gives the defaults for what is missing, and the master as a URL', () => {
    const result = parseWorkflowConfig('[cluster]\nmaster = 127.0.0.1:5051\n');
    expect(result.ok && result.config).toEqual({ ...DEFAULT_CONFIG, master: '127.0.0.1:5051' });
    expect(result.ok && masterUrlsOf(result.config.master)).toEqual(['http://127.0.0.1:5051']);
    expect(masterUrlsOf('127.0.0.1:5050', true)).toEqual(['https://127.0.0.1:5050']);
    expect(masterUrlsOf('http://m:5050/, m2:5051')).toEqual(['http://m:5050', 'http://m2:5051']);
    expect(parseWorkflowConfig('')).toEqual({ ok: true, config: DEFAULT_CONFIG });
    expect(parseWorkflowConfig('[cluster]\ncluster_attributes = a:1, b:2\n')).toMatchObject({
      ok: true,
      config: { clusterAttributes: ['a:1', 'b:2'] },
    });
  });

  it.each([
    ['colour = blue', '[cluster] colour: unknown key'],
    [
      'master = nowhere',
      '[cluster] master: expected host:port (or a URL), comma-separated for several masters, got "nowhere"',
    ],
    ['checkpoint = maybe', '[cluster] checkpoint: expected a boolean, got "maybe"'],
    ['failover_timeout = 1.5', '[cluster] failover_timeout: expected a non-negative integer (seconds), got "1.5"'],
    ['task_cpu = -1', '[cluster] task_cpu: expected a non-negative number, got "-1"'],
    ['task_memory = lots', '[cluster] task_memory: expected a non-negative integer (MiB), got "lots"'],
    [
      'engine_network_mode = overlay',
      '[cluster] engine_network_mode: expected HOST, BRIDGE, NONE, USER, got "overlay"',
    ],
    [
      'cluster_attributes = ["nocolon"]',
      '[cluster] cluster_attributes: expected a list of <name>:<value>, got "[\\"nocolon\\"]"',
    ],
    [
      'engine_environment = [1]',
      '[cluster] engine_environment: expected a list of NAME=value or {"name","value"} objects, got "[1]"',
    ],
    ['operator_api_url = ftp://x', '[cluster] operator_api_url: expected an http(s) URL, got "ftp://x"'],
    ['authenticate = true\ndefault_secret = s', '[cluster] default_principal: required with authenticate = true'],
  ])('refuses %s, naming the key', (line, error) => {
    expect(parseWorkflowConfig(`[cluster]\n${line}\n`)).toEqual({ ok: false, error });
  });

  it('reads a file, and says which file it cannot read', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'workflow-config-'));
    const file = path.join(dir, 'workflow.cfg');
    writeFileSync(file, '[cluster]\ntask_disk = 10\n');
    expect(loadWorkflowConfig(file)).toMatchObject({ ok: true, config: { taskDiskMib: 10 } });
    const missing = loadWorkflowConfig(path.join(dir, 'none.cfg'));
    expect(missing.ok === false && missing.error).toMatch(/none\.cfg: ENOENT/);
  });
});
