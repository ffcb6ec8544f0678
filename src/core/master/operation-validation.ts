/**
 * Validation of RESERVE, UNRESERVE, CREATE and DESTROY, in upstream's order
 * and words, before an operation is tried on the resources it consumes.
 * `framework` is the accepting framework, absent for the operator's calls
 * (which carry no principal here: nothing authenticates them).
 *
 *   RESERVE    each resource dynamically reserved (by its last reservation),
 *              not a persistent volume; refinements only narrow the role
 *              before; principal equals the framework's; framework path: the
 *              reservation role is the allocation role and one of the
 *              framework's roles; operator path: no allocation role
 *   UNRESERVE  each resource dynamically reserved, not a persistent volume
 *   CREATE     each a persistent volume (disk info with persistence and a
 *              read-write volume) on reserved disk; persistence ids unique
 *              per role on the agent; principal equals the framework's
 *   DESTROY    each a persistent volume the agent has, whole (same size and
 *              fields), not used by a task or executor
 *   any        at least one resource once zero quantities are dropped
 */
import { allocate as withAllocationRole, contains, format, type Resource, type Resources } from '../model/resources.js';
import { isDynamicallyReserved, isPersistentVolume, isReserved } from '../model/conversions.js';
import type { ResourceOperation } from '../model/types.js';
import type { Framework } from './framework.js';
import { roleError } from './validation.js';

export interface OperationContext {
  /** The accepting framework; undefined for the operator. */
  readonly framework?: Framework;
  /** The agent's total, as the master knows it. */
  readonly total: Resources;
  /** What tasks and executors use on the agent. */
  readonly used: Resources;
}

export function operationError(op: ResourceOperation, ctx: OperationContext): string | undefined {
  if (op.invalid !== undefined) return `Invalid resources: ${op.invalid}`;
  // Zero quantities are dropped as the wire is read: nothing may be left to operate on.
  if (op.resources.length === 0) return 'Operation contains no resources';
  const shapeError = resourcesError(op.resources);
  if (shapeError !== undefined) return `Invalid resources: ${shapeError}`;
  switch (op.type) {
    case 'RESERVE':
      return reserveError(op.resources, ctx);
    case 'UNRESERVE':
      return unreserveError(op.resources);
    case 'CREATE':
      return createError(op.resources, ctx);
    case 'DESTROY':
      return destroyError(op.resources, ctx);
  }
}

/** What upstream's `Resources::validate` and the DiskInfo checks say of any resource list. */
function resourcesError(resources: Resources): string | undefined {
  for (const r of resources) {
    const stack = r.reservations ?? [];
    for (let i = 0; i < stack.length; i++) {
      const { type, role } = stack[i]!;
      const badRole = roleError(role);
      if (badRole !== undefined) return `Invalid reservation role: ${badRole}`;
      if (role === '*') return `Invalid reservation: role '*' cannot be reserved`;
      if (i > 0 && type === 'STATIC') return 'Invalid reservation: a static reservation must come first';
      if (i > 0 && !role.startsWith(`${stack[i - 1]!.role}/`)) {
        return `Invalid reservation: role '${role}' does not refine the role '${stack[i - 1]!.role}' before it`;
      }
    }
    if (r.disk !== undefined) {
      if (r.name !== 'disk') return `DiskInfo should not be set for ${r.name} resource`;
      if (r.disk.persistence !== undefined && !isReserved(r)) {
        return 'Invalid DiskInfo: Persistent volumes cannot be created from unreserved resources';
      }
      if (r.disk.persistence === undefined && r.disk.volume !== undefined)
        return 'Invalid DiskInfo: Non-persistent volume not supported';
    }
  }
  return undefined;
}

function reserveError(resources: Resources, ctx: OperationContext): string | undefined {
  const fw = ctx.framework;
  const principal = fw?.info.principal;
  for (const r of resources) {
    if (!isDynamicallyReserved(r)) return `Resource ${format([r])} is not dynamically reserved`;
    const reservation = r.reservations![r.reservations!.length - 1]!;
    if (principal !== undefined) {
      if (reservation.principal === undefined) {
        return `A reserve operation was attempted by principal '${principal}', but there is a reserved resource in the request with no principal set`;
      }
      if (reservation.principal !== principal) {
        return `A reserve operation was attempted by authenticated principal '${principal}', which does not match a reserved resource in the request with principal '${reservation.principal}'`;
      }
    }
    const roleProblem = fw === undefined ? operatorReserveError(r) : frameworkReserveError(r, fw);
    if (roleProblem !== undefined) return roleProblem;
    if (isPersistentVolume(r)) return `A persistent volume ${format([r])} must already be reserved`;
  }
  return undefined;
}

function frameworkReserveError(r: Resource, fw: Framework): string | undefined {
  const roles = fw.roles();
  const allocated = r.allocationRole;
  if (allocated === undefined) {
    return `A reserve operation was attempted on unallocated resource ${format([r])}, but frameworks can only perform reservations on allocated resources`;
  }
  if (allocated !== r.role) {
    return `A reserve operation was attempted for a resource with role '${r.role}', but the resource was allocated to role '${allocated}'`;
  }
  if (!roles.includes(r.role)) {
    return `A reserve operation was attempted for a resource with role '${r.role}', but the framework can only reserve resources with roles '{ ${roles.join(', ')} }'`;
  }
  if ((r.reservations?.length ?? 0) > 1 && !fw.has('RESERVATION_REFINEMENT')) {
    return `Resource ${format([r])} with reservation refinement cannot be used by a framework without the RESERVATION_REFINEMENT capability`;
  }
  return undefined;
}

function operatorReserveError(r: Resource): string | undefined {
  if (r.allocationRole === undefined) return undefined;
  return 'A reserve operation was attempted with an allocated resource, but the operator API only allows reservations to be made to unallocated resources';
}

function unreserveError(resources: Resources): string | undefined {
  for (const r of resources) {
    if (!isDynamicallyReserved(r)) return `Resource ${format([r])} is not dynamically reserved`;
    if (isPersistentVolume(r)) {
      return `A dynamically reserved persistent volume ${format([r])} cannot be unreserved directly. Please destroy the persistent volume first then unreserve the resource`;
    }
  }
  return undefined;
}

/** Upstream's `validatePersistentVolume`, prefixed as the operations report it. */
function volumeError(volumes: Resources): string | undefined {
  for (const v of volumes) {
    if (v.disk === undefined) return `Not a persistent volume: Resource ${format([v])} does not have DiskInfo`;
    if (v.disk.persistence === undefined) return "Not a persistent volume: 'persistence' is not set in DiskInfo";
    if (v.disk.volume === undefined)
      return "Not a persistent volume: Expecting 'volume' to be set for persistent volume";
    if (v.disk.volume.mode === 'RO') return 'Not a persistent volume: Read-only persistent volume not supported';
  }
  return undefined;
}

function createError(volumes: Resources, ctx: OperationContext): string | undefined {
  const notVolume = volumeError(volumes);
  if (notVolume !== undefined) return notVolume;
  const seen = new Set<string>();
  for (const v of [...ctx.total, ...volumes]) {
    const id = v.disk?.persistence?.id;
    if (id === undefined) continue;
    const key = `${v.role}\u0000${id}`;
    if (seen.has(key)) return `Persistence ID '${id}' is not unique`;
    seen.add(key);
  }
  const principal = ctx.framework?.info.principal;
  for (const v of volumes) {
    const id = v.disk!.persistence!.id;
    if (/[\u0000-\u001f\u007f/\\]/u.test(id)) return `Persistence ID '${id}' contains invalid characters`;
    const owner = v.disk!.persistence!.principal;
    if (principal === undefined) continue;
    if (owner === undefined) {
      return `Create volume operation attempted by principal '${principal}', but there is a volume in the operation with no principal set in 'disk.persistence'`;
    }
    if (owner !== principal) {
      return `Create volume operation attempted by authenticated principal '${principal}', which does not match a volume in the operation with principal '${owner}' set in 'disk.persistence'`;
    }
  }
  return undefined;
}

function destroyError(volumes: Resources, ctx: OperationContext): string | undefined {
  const notVolume = volumeError(volumes);
  if (notVolume !== undefined) return notVolume;
  // Whole volumes, as the agent has them (every field and the size): a volume is never destroyed in part.
  if (!contains(ctx.total, withAllocationRole(volumes, undefined))) return 'Persistent volumes not found';
  // By role and persistence id, the list read once: a DESTROY may name every volume of an agent that has thousands.
  const inUse = volumeKeys(ctx.used);
  if (volumes.some((v) => inUse.has(volumeKey(v)))) return 'Persistent volumes in use';
  return undefined;
}

/** A volume's identity on its agent: role and persistence id. */
const volumeKey = (r: Resource): string => `${r.role}\u0000${r.disk!.persistence!.id}`;

function volumeKeys(bag: Resources): Set<string> {
  return new Set(bag.filter((r) => r.disk?.persistence !== undefined).map(volumeKey));
}
