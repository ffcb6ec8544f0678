/**
 * GET_STATE's and GET_AGENTS' agents written straight to protobuf bytes
 * and to JSON text, for the reads that write tens of thousands of them:
 * the same bytes as `encodeProto` and the same text as `encodeJson` of
 * `agentToWire`, without the message objects in between.
 * Each kind of bag of resources (bag-memo.ts) and each list of attributes
 * is encoded once (agents started alike share their attributes). An agent being
 * drained, a reader who may not view every role, a time before the epoch
 * and text that is not ASCII go through the generic encoder.
 */
import protobuf from 'protobufjs/light.js';
import type { AgentSnapshot } from '../core/model/operator-types.js';
import type { Resources } from '../core/model/resources.js';
import type { Attribute } from '../core/model/types.js';
import type { ClusterView } from '../core/view.js';
import { BagMemo } from './bag-memo.js';
import { attributeToWire, resourcesToWire } from './convert-common.js';
import { AGENT_CAPABILITIES } from './v0/slaves.js';
import { agentToWire } from './operator-state.js';
import { encodeProto } from './proto-codec.js';
import { isAscii, ProtoWriter } from './proto-writer.js';
import { encodeJson, quote } from './json-encode.js';
import { resourcesJson } from './task-writer.js';
import { messageType } from './schema.js';
import type { Viewer } from './view-filter.js';

const AGENT = 'mesos.v1.master.Response.GetAgents.Agent';

/** Field numbers of GetAgents.Agent, AgentInfo and TimeInfo (master.proto, mesos.proto). */
const F = {
  info: 1,
  active: 2,
  version: 3,
  pid: 4,
  registered: 5,
  reregistered: 6,
  total: 7,
  allocated: 8,
  offered: 9,
  capabilities: 10,
  deactivated: 12,
};
const INFO = { hostname: 1, resources: 3, attributes: 5, id: 6, port: 8 };
const NANOSECONDS = 1;

const capabilityType = messageType('mesos.v1.AgentInfo.Capability').fields['type']?.resolvedType;
if (!(capabilityType instanceof protobuf.Enum)) throw new Error('AgentInfo.Capability.type is no enum');
const capabilityTypes = capabilityType.values;

/** The capabilities field entries, the same for every agent. */
const CAPABILITIES = (() => {
  const out = new ProtoWriter(64);
  for (const type of AGENT_CAPABILITIES) {
    const at = out.begin(F.capabilities);
    out.uint(1, capabilityTypes[type]!);
    out.end(at);
  }
  return out.take(true);
})();

/** Each resource of a bag as a message, once per kind of bag (bag-memo.ts). */
const bagMessages = new BagMemo((bag) => resourcesToWire(bag).map((r) => encodeProto('mesos.v1.Resource', r)));
const attributeMessages = new WeakMap<readonly Attribute[], Uint8Array[]>();

function resourceMessages(bag: Resources): Uint8Array[] {
  return bagMessages.of(bag);
}

function attributesOf(attributes: readonly Attribute[]): Uint8Array[] {
  let list = attributeMessages.get(attributes);
  if (list === undefined)
    attributeMessages.set(
      attributes,
      (list = attributes.map((a) => encodeProto('mesos.v1.Attribute', attributeToWire(a)))),
    );
  return list;
}

function direct(agent: AgentSnapshot, version: string, viewer: Viewer): boolean {
  if (!viewer.all || agent.drain !== undefined || agent.drainStartTimeMs !== undefined) return false;
  if (
    agent.registeredTimeMs < 0 ||
    (agent.reregisteredTimeMs ?? 0) < 0 ||
    !Number.isInteger(agent.info.port) ||
    agent.info.port < 0
  )
    return false;
  return isAscii(agent.id) && isAscii(agent.info.hostname) && isAscii(agent.pid) && isAscii(version);
}

function time(out: ProtoWriter, field: number, ms: number): void {
  const at = out.begin(field);
  out.uint(NANOSECONDS, Math.round(ms * 1e6));
  out.end(at);
}

/** Writes the agent as field `field` of the enclosing message: the bytes of `encodeProto(Agent, agentToWire(view, agent, viewer))` with their tag and length. */
export function writeAgentProto(
  out: ProtoWriter,
  field: number,
  view: ClusterView,
  agent: AgentSnapshot,
  viewer: Viewer,
): void {
  const version = view.masterInfo.version;
  if (!direct(agent, version, viewer)) return out.bytes(field, encodeProto(AGENT, agentToWire(view, agent, viewer)));
  const at = out.begin(field);
  const info = out.begin(F.info);
  out.string(INFO.hostname, agent.info.hostname);
  for (const bytes of resourceMessages(agent.info.resources)) out.bytes(INFO.resources, bytes);
  for (const bytes of attributesOf(agent.info.attributes)) out.bytes(INFO.attributes, bytes);
  out.idMessage(INFO.id, agent.id);
  out.uint(INFO.port, agent.info.port);
  out.end(info);
  out.uint(F.active, agent.active ? 1 : 0);
  out.string(F.version, version);
  out.string(F.pid, agent.pid);
  time(out, F.registered, agent.registeredTimeMs);
  if (agent.reregisteredTimeMs !== undefined) time(out, F.reregistered, agent.reregisteredTimeMs);
  for (const bytes of resourceMessages(agent.info.resources)) out.bytes(F.total, bytes);
  for (const bytes of resourceMessages(agent.allocated)) out.bytes(F.allocated, bytes);
  for (const bytes of resourceMessages(agent.offered)) out.bytes(F.offered, bytes);
  out.raw(CAPABILITIES);
  out.uint(F.deactivated, agent.deactivated ? 1 : 0);
  out.end(at);
}

const attributeTexts = new WeakMap<readonly Attribute[], string>();

function attributesJson(attributes: readonly Attribute[]): string {
  let text = attributeTexts.get(attributes);
  if (text === undefined) {
    text = attributes.map((a) => encodeJson('mesos.v1.Attribute', attributeToWire(a))).join(',');
    attributeTexts.set(attributes, text);
  }
  return text;
}

const CAPABILITIES_JSON = `[${AGENT_CAPABILITIES.map((type) => `{"type":"${type}"}`).join(',')}]`;

/** A list field, left out when empty as the JSON encoder leaves it out. */
const listJson = (key: string, bag: Resources): string =>
  bag.length === 0 ? '' : `,"${key}":[${resourcesJson.of(bag)}]`;

const timeJson = (ms: number): string => `{"nanoseconds":${String(Math.round(ms * 1e6))}}`;

/** `encodeJson(Agent, agentToWire(view, agent, viewer))`. */
export function agentWireJson(view: ClusterView, agent: AgentSnapshot, viewer: Viewer): string {
  const version = view.masterInfo.version;
  if (!direct(agent, version, viewer)) return encodeJson(AGENT, agentToWire(view, agent, viewer));
  const { info } = agent;
  let out = `{"agent_info":{"hostname":${quote(info.hostname)},"port":${String(info.port)}`;
  out += listJson('resources', info.resources);
  if (info.attributes.length > 0) out += `,"attributes":[${attributesJson(info.attributes)}]`;
  out += `,"id":{"value":${quote(agent.id)}}},"active":${String(agent.active)},"version":${quote(version)}`;
  out += `,"pid":${quote(agent.pid)},"registered_time":${timeJson(agent.registeredTimeMs)}`;
  if (agent.reregisteredTimeMs !== undefined) out += `,"reregistered_time":${timeJson(agent.reregisteredTimeMs)}`;
  out += listJson('total_resources', info.resources) + listJson('allocated_resources', agent.allocated);
  out += listJson('offered_resources', agent.offered);
  return `${out},"capabilities":${CAPABILITIES_JSON},"deactivated":${String(agent.deactivated)}}`;
}
