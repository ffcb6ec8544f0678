/** Scheduler events from core values to wire messages. */
import type { Unavailability } from '../core/model/maintenance.js';
import type {
  InverseOfferView,
  MasterInfo,
  OfferView,
  OperationStatus,
  SchedulerEvent,
  TaskStatus,
} from '../core/model/types.js';
import { hexToBytes, ipToUint32 } from './bytes.js';
import { attributeToWire, resourcesToWire } from './convert-common.js';
import type { mesos } from './generated/types.js';
import { encodeJson, quote } from './json-encode.js';
import { updateJson } from './update-json.js';

type Event = mesos.v1.scheduler.Event;

export function eventToWire(event: SchedulerEvent): Event {
  switch (event.type) {
    case 'SUBSCRIBED':
      return {
        type: 'SUBSCRIBED',
        subscribed: {
          framework_id: { value: event.frameworkId },
          heartbeat_interval_seconds: event.heartbeatIntervalSeconds,
          master_info: masterInfoToWire(event.masterInfo),
        },
      };
    case 'OFFERS':
      return { type: 'OFFERS', offers: { offers: event.offers.map(offerToWire) } };
    case 'RESCIND':
      return { type: 'RESCIND', rescind: { offer_id: { value: event.offerId } } };
    case 'UPDATE':
      return { type: 'UPDATE', update: { status: taskStatusToWire(event.status) } };
    case 'UPDATE_OPERATION_STATUS':
      return {
        type: 'UPDATE_OPERATION_STATUS',
        update_operation_status: { status: operationStatusToWire(event.status) },
      };
    case 'MESSAGE':
      return {
        type: 'MESSAGE',
        message: { agent_id: { value: event.agentId }, executor_id: { value: event.executorId }, data: event.data },
      };
    case 'FAILURE':
      return {
        type: 'FAILURE',
        failure: {
          ...(event.agentId === undefined ? {} : { agent_id: { value: event.agentId } }),
          ...(event.executorId === undefined ? {} : { executor_id: { value: event.executorId } }),
          ...(event.status === undefined ? {} : { status: event.status }),
        },
      };
    case 'ERROR':
      return { type: 'ERROR', error: { message: event.message } };
    case 'HEARTBEAT':
      return { type: 'HEARTBEAT' };
    case 'INVERSE_OFFERS':
      return {
        type: 'INVERSE_OFFERS',
        inverse_offers: { inverse_offers: event.inverseOffers.map(inverseOfferToWire) },
      };
    case 'RESCIND_INVERSE_OFFER':
      return {
        type: 'RESCIND_INVERSE_OFFER',
        rescind_inverse_offer: { inverse_offer_id: { value: event.inverseOfferId } },
      };
  }
}

export function unavailabilityToWire(u: Unavailability): mesos.v1.Unavailability {
  return {
    start: { nanoseconds: u.startNs },
    ...(u.durationNs === undefined ? {} : { duration: { nanoseconds: u.durationNs } }),
  };
}

export function inverseOfferToWire(io: InverseOfferView): mesos.v1.InverseOffer {
  return {
    id: { value: io.id },
    framework_id: { value: io.frameworkId },
    agent_id: { value: io.agentId },
    unavailability: unavailabilityToWire(io.unavailability),
  };
}

export function masterInfoToWire(info: MasterInfo): mesos.v1.MasterInfo {
  return {
    id: info.id,
    ip: ipToUint32(info.ip),
    port: info.port,
    pid: info.pid,
    hostname: info.hostname,
    version: info.version,
    address: { hostname: info.hostname, ip: info.ip, port: info.port },
    capabilities: [{ type: 'AGENT_UPDATE' }, { type: 'AGENT_DRAINING' }, { type: 'QUOTA_V2' }],
  };
}

export function offerToWire(offer: OfferView): mesos.v1.Offer {
  return {
    id: { value: offer.id },
    framework_id: { value: offer.frameworkId },
    agent_id: { value: offer.agentId },
    hostname: offer.hostname,
    url: {
      scheme: offer.url.scheme,
      address: { hostname: offer.url.hostname, ip: offer.url.ip, port: offer.url.port },
      ...(offer.url.path === undefined ? {} : { path: offer.url.path }),
    },
    resources: resourcesToWire(offer.resources, offer.reservationRefinement ?? false),
    attributes: offer.attributes.map(attributeToWire),
    executor_ids: offer.executorIds.map((value) => ({ value })),
    ...(offer.allocationRole === undefined ? {} : { allocation_info: { role: offer.allocationRole } }),
    ...(offer.unavailability === undefined ? {} : { unavailability: unavailabilityToWire(offer.unavailability) }),
  };
}

export function taskStatusToWire(s: TaskStatus): mesos.v1.TaskStatus {
  return {
    task_id: { value: s.taskId },
    state: s.state,
    ...(s.message === undefined ? {} : { message: s.message }),
    source: s.source,
    ...(s.reason === undefined ? {} : { reason: s.reason }),
    ...(s.data === undefined ? {} : { data: s.data }),
    ...(s.agentId === undefined ? {} : { agent_id: { value: s.agentId } }),
    ...(s.executorId === undefined ? {} : { executor_id: { value: s.executorId } }),
    timestamp: s.timestampMs / 1000,
    ...(s.uuid === undefined ? {} : { uuid: hexToBytes(s.uuid) }),
    ...(s.containerId === undefined ? {} : { container_status: { container_id: { value: s.containerId } } }),
    ...(s.unreachableTimeMs === undefined
      ? {}
      : { unreachable_time: { nanoseconds: Math.round(s.unreachableTimeMs * 1e6) } }),
    ...(s.limitation === undefined ? {} : { limitation: { resources: resourcesToWire(s.limitation) } }),
  };
}

export function operationStatusToWire(s: OperationStatus): mesos.v1.OperationStatus {
  return {
    ...(s.operationId === undefined ? {} : { operation_id: { value: s.operationId } }),
    state: s.state,
    ...(s.message === undefined ? {} : { message: s.message }),
    ...(s.uuid === undefined ? {} : { uuid: { value: hexToBytes(s.uuid) } }),
    ...(s.agentId === undefined ? {} : { agent_id: { value: s.agentId } }),
    ...(s.resourceProviderId === undefined ? {} : { resource_provider_id: { value: s.resourceProviderId } }),
  };
}

/**
 * An event as JSON text. ERROR also carries its message at the top level,
 * where the spec's event table puts it, beside upstream's `error.message`:
 * clients written against either read it, and JSON readers ignore the key
 * they do not know. Protobuf has only upstream's field.
 */
export function eventToJson(event: SchedulerEvent): string {
  const update = event.type === 'UPDATE' ? updateJson(event.status) : undefined;
  if (update !== undefined) return update;
  const text = encodeJson('mesos.v1.scheduler.Event', eventToWire(event));
  return event.type === 'ERROR' ? `${text.slice(0, -1)},"message":${quote(event.message)}}` : text;
}
