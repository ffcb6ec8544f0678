/** What the workflow framework reads of offers and writes into a LAUNCH: room, constraints, the TaskInfo. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../../src/frameworks/workflow/config.js';
import { fits, roomOf, satisfies, take, taskInfo } from '../../../src/frameworks/workflow/offers.js';
import { parseQueueRequest, type QueueRequest } from '../../../src/frameworks/workflow/request.js';

const scalar = (name: string, value: number) => ({ name, type: 'SCALAR', scalar: { value } });

const OFFER = {
  resources: [
    scalar('cpus', 1),
    scalar('mem', 256),
    scalar('disk', 100),
    { name: 'ports', type: 'RANGES', ranges: { range: [{ begin: 31000, end: 32000 }] } },
  ],
  attributes: [
    { name: 'zone', type: 'TEXT', text: { value: 'a' } },
    { name: 'gpus', type: 'SCALAR', scalar: { value: 2 } },
    { name: 'disks', type: 'SET', set: { item: ['ssd', 'hdd'] } },
    { name: 'racks', type: 'RANGES', ranges: { range: [{ begin: 10, end: 20 }] } },
  ],
};

function request(body: Record<string, unknown>, config = DEFAULT_CONFIG): QueueRequest {
  const parsed = parseQueueRequest(
    { workflow_task_id: 't', image: 'alpine', command: ['true'], ...body },
    config,
    () => 'unused',
  );
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.request;
}

describe('offers', () => {
  it('reads the room of an offer and takes requests out of it, in fixed point', () => {
    const room = roomOf(OFFER);
    expect(room).toEqual({ cpus: 1, mem: 256, disk: 100 });
    const small = request({ cpus: 0.3, mem_limit: '100m', disk: 10 });
    take(room, small);
    take(room, small);
    expect(room).toEqual({ cpus: 0.4, mem: 56, disk: 80 });
    expect(fits(room, small)).toBe(false);
    expect(fits(roomOf(OFFER), request({ cpus: 1, mem_limit: 256, disk: 100 }))).toBe(true);
    expect(fits(roomOf(OFFER), request({ cpus: 1.001 }))).toBe(false);
    expect(fits(roomOf(OFFER), request({ disk: 101 }))).toBe(false);
  });

  it.each([
    [['zone:a'], true],
    [['zone:b'], false],
    [['gpus:2'], true],
    [['gpus:2.0'], true],
    [['gpus:3'], false],
    [['disks:ssd'], true],
    [['disks:nvme'], false],
    [['racks:15'], true],
    [['racks:21'], false],
    [['zone:a', 'gpus:2', 'disks:hdd'], true],
    [['zone:a', 'rack:1'], false],
    [[], true],
  ])('constraints %j hold: %s', (constraints, holds) => expect(satisfies(OFFER, constraints)).toBe(holds));
});

describe('taskInfo', () => {
  it('runs an engine container with the request and the configured engine settings', () => {
    const config = {
      ...DEFAULT_CONFIG,
      engineEnvironment: [{ name: 'GLOBAL', value: '1' }],
      engineVolumeDagName: 'dags',
      engineVolumeDagContainerPath: '/dags',
      engineSock: '/run/engine.sock',
      engineUserGroupId: '999',
    };
    const r = request(
      {
        command: ['echo', "it's here"],
        cpus: 0.5,
        mem_limit: '1g',
        environment: { A: 'b' },
        network_mode: 'bridge',
        force_pull: true,
        user: 'nobody',
        volumes: ['/data:/in:ro'],
      },
      config,
    );
    expect(taskInfo(r, 't.2', config, 'agent-1')).toEqual({
      name: 't',
      task_id: { value: 't.2' },
      agent_id: { value: 'agent-1' },
      resources: [scalar('cpus', 0.5), scalar('mem', 1024), scalar('disk', 1000)],
      command: {
        shell: true,
        value: `echo 'it'\\''s here'`,
        environment: {
          variables: [
            { type: 'VALUE', name: 'GLOBAL', value: '1' },
            { type: 'VALUE', name: 'A', value: 'b' },
          ],
        },
      },
      container: {
        type: 'DOCKER',
        docker: {
          image: 'alpine',
          network: 'BRIDGE',
          force_pull_image: true,
          parameters: [
            { key: 'volume', value: '/run/engine.sock:/var/run/docker.sock' },
            { key: 'group-add', value: '999' },
            { key: 'user', value: 'nobody' },
          ],
        },
        volumes: [
          {
            container_path: '/dags',
            mode: 'RW',
            source: { type: 'DOCKER_VOLUME', docker_volume: { driver: 'local', name: 'dags' } },
          },
          { host_path: '/data', container_path: '/in', mode: 'RO' },
        ],
      },
    });
  });

  it('gives a /bin/sh -c script to the shell as it is, or the argument list without the shell', () => {
    expect(taskInfo(request({ command: 'exit 3' }), 't', DEFAULT_CONFIG, 'a').command).toMatchObject({
      shell: true,
      value: 'exit 3',
    });
    expect(
      taskInfo(request({ command: ['sleep', '1'] }), 't', { ...DEFAULT_CONFIG, commandShell: false }, 'a').command,
    ).toMatchObject({ shell: false, value: 'sleep', arguments: ['sleep', '1'] });
  });

  it("runs MESOS requests in the cluster's own container with the image, the user on the command; no zero resources", () => {
    const info = taskInfo(
      request({ container_type: 'MESOS', user: 'app', force_pull: true, cpus: 0, disk: 0 }),
      't',
      DEFAULT_CONFIG,
      'a',
    );
    expect(info.container).toEqual({
      type: 'MESOS',
      mesos: { image: { type: 'DOCKER', docker: { name: 'alpine' }, cached: false } },
      volumes: [],
    });
    expect(info.command.user).toBe('app');
    expect(info.resources).toEqual([scalar('mem', 256)]);
  });
});
