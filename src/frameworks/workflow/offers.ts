/**
 * What the workflow framework reads of an offer and writes into an ACCEPT:
 * the offer's free cpus, memory and disk, whether its agent satisfies a
 * request's constraints, and the TaskInfo (upstream JSON) that runs a
 * request as a container.
 *
 * A constraint `<name>:<value>` holds on an agent with an attribute of
 * that name whose value is the one given: a TEXT equal to it, a SCALAR
 * numerically equal, a SET holding it, or RANGES containing the number.
 */
import type { WorkflowConfig } from './config.js';
import type { QueueRequest } from './request.js';

export type JsonObject = Record<string, any>;

export interface Room {
  cpus: number;
  mem: number;
  disk: number;
}

/** The offer's unreserved and reserved scalars together, by name (the framework has one role). */
export function roomOf(offer: JsonObject): Room {
  const room: Room = { cpus: 0, mem: 0, disk: 0 };
  for (const r of (offer['resources'] ?? []) as JsonObject[]) {
    if ((r['name'] === 'cpus' || r['name'] === 'mem' || r['name'] === 'disk') && r['type'] === 'SCALAR')
      room[r['name'] as keyof Room] += Number(r['scalar']?.['value'] ?? 0);
  }
  return room;
}

/** Resource comparison with upstream's fixed point: three decimal digits. */
const milli = (n: number): number => Math.round(n * 1000);

export function fits(room: Room, request: QueueRequest): boolean {
  return (
    milli(room.cpus) >= milli(request.cpus) &&
    milli(room.mem) >= milli(request.memMib) &&
    milli(room.disk) >= milli(request.diskMib)
  );
}

export function take(room: Room, request: QueueRequest): void {
  room.cpus = (milli(room.cpus) - milli(request.cpus)) / 1000;
  room.mem = (milli(room.mem) - milli(request.memMib)) / 1000;
  room.disk = (milli(room.disk) - milli(request.diskMib)) / 1000;
}

function attributeHolds(attribute: JsonObject, value: string): boolean {
  switch (attribute['type']) {
    case 'TEXT':
      return attribute['text']?.['value'] === value;
    case 'SCALAR':
      return value.trim() !== '' && Number(value) === Number(attribute['scalar']?.['value']);
    case 'SET':
      return ((attribute['set']?.['item'] ?? []) as string[]).includes(value);
    case 'RANGES': {
      const n = Number(value);
      return ((attribute['ranges']?.['range'] ?? []) as JsonObject[]).some(
        (r) => Number(r['begin']) <= n && n <= Number(r['end']),
      );
    }
    default:
      return false;
  }
}

/** Whether the offer's agent satisfies every constraint. */
export function satisfies(offer: JsonObject, constraints: readonly string[]): boolean {
  const attributes = (offer['attributes'] ?? []) as JsonObject[];
  return constraints.every((c) => {
    const i = c.indexOf(':');
    const name = c.slice(0, i);
    const value = c.slice(i + 1);
    return attributes.some((a) => a['name'] === name && attributeHolds(a, value));
  });
}

const scalar = (name: string, value: number): JsonObject => ({ name, type: 'SCALAR', scalar: { value } });

/** `'…'` quoting for a POSIX shell: the words of an argument list as one shell command line. */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command: through the shell (`command_shell`, the default) as one
 * command line, where `/bin/sh -c SCRIPT` is the script itself (the agent
 * runs a shell command as `/bin/sh -c`); else the argument list as it is.
 */
function commandInfo(request: QueueRequest, config: WorkflowConfig): JsonObject {
  const argv = request.command;
  const variables = [
    ...config.engineEnvironment,
    ...Object.entries(request.environment).map(([name, value]) => ({ name, value })),
  ];
  const environment = { variables: variables.map((v) => ({ type: 'VALUE', ...v })) };
  if (!config.commandShell) return { shell: false, value: argv[0], arguments: [...argv], environment };
  const isShellScript = argv.length === 3 && /^(?:\/bin\/)?sh$/.test(argv[0]!) && argv[1] === '-c';
  return { shell: true, value: isShellScript ? argv[2] : argv.map(shellQuote).join(' '), environment };
}

function volumesOf(request: QueueRequest, config: WorkflowConfig): JsonObject[] {
  const named = (name: string | undefined, path: string | undefined): JsonObject[] =>
    name === undefined || path === undefined
      ? []
      : [
          {
            container_path: path,
            mode: 'RW',
            source: { type: 'DOCKER_VOLUME', docker_volume: { driver: config.engineVolumeDriver, name } },
          },
        ];
  const given = request.volumes.map((v) => {
    const [hostPath, containerPath, mode] = v.split(':');
    return { host_path: hostPath, container_path: containerPath, mode: mode?.toLowerCase() === 'ro' ? 'RO' : 'RW' };
  });
  return [
    ...named(config.engineVolumeDagName, config.engineVolumeDagContainerPath),
    ...named(config.engineVolumeLogsName, config.engineVolumeLogsContainerPath),
    ...given,
  ];
}

/** Engine `docker run` parameters: the engine socket, the group to add, the user. */
function parametersOf(request: QueueRequest, config: WorkflowConfig): JsonObject[] {
  return [
    ...(config.engineSock === undefined ? [] : [{ key: 'volume', value: `${config.engineSock}:/var/run/docker.sock` }]),
    ...(config.engineUserGroupId === undefined ? [] : [{ key: 'group-add', value: config.engineUserGroupId }]),
    ...(request.user === undefined ? [] : [{ key: 'user', value: request.user }]),
  ];
}

function containerInfo(request: QueueRequest, config: WorkflowConfig): JsonObject {
  const volumes = volumesOf(request, config);
  if (request.containerType === 'MESOS') {
    return {
      type: 'MESOS',
      mesos: { image: { type: 'DOCKER', docker: { name: request.image }, cached: !request.forcePull } },
      volumes,
    };
  }
  const docker = {
    image: request.image,
    network: request.networkMode ?? config.engineNetworkMode,
    force_pull_image: request.forcePull,
    parameters: parametersOf(request, config),
  };
  return { type: 'DOCKER', docker, volumes };
}

/** The TaskInfo that runs a request on the offer's agent. */
export function taskInfo(request: QueueRequest, taskId: string, config: WorkflowConfig, agentId: string): JsonObject {
  const command = commandInfo(request, config);
  // The cluster's own containerizer takes the user from the command; the engine from its `user` parameter.
  if (request.containerType === 'MESOS' && request.user !== undefined) command['user'] = request.user;
  return {
    name: request.taskId,
    task_id: { value: taskId },
    agent_id: { value: agentId },
    // A zero quantity is no resource at all: upstream drops empty scalars.
    resources: [scalar('cpus', request.cpus), scalar('mem', request.memMib), scalar('disk', request.diskMib)].filter(
      (r) => r['scalar'].value > 0,
    ),
    command,
    container: containerInfo(request, config),
  };
}
