/**
 * Quota: per-role limits (and the deprecated guarantees) on scalar
 * resources, set by the operator's UPDATE_QUOTA and enforced by the
 * allocator. Checks run in upstream's order and the request is all or
 * nothing:
 *
 *   each config valid (role, not nested, values, guarantees <= limits)
 *   each role's consumption within its new limits, unless `force`
 *   total guarantees within the cluster's capacity, unless `force`
 *   each role authorized
 *
 * then the configs are stored (empty guarantees and limits reset a role),
 * the allocator is told, and outstanding offers are rescinded until each
 * role's consumption plus offers fits its limits, and until enough is free
 * for its guarantees.
 *
 * Consumption of a role = what tasks and executors of the role (and roles
 * beneath it) use of unreserved resources, plus everything reserved to
 * them, allocated or not. Offered resources are not charged.
 */
import { done, fail, type Outcome } from '../model/errors.js';
import { fromMilli, scalarQuantities, type Resources } from '../model/resources.js';
import type { Quantities, QuotaConfig, QuotaConfigRequest, QuotaUpdate } from '../model/types.js';
import { inSubtree } from './agent-totals.js';
import type { Offer } from '../model/records.js';
import type { MasterOps } from './ops.js';
import { removeOffer } from './offers.js';
import { roleError } from './validation.js';

/** Upstream's ceilings: 1 exabyte in MB for mem and disk, 1 trillion for the rest. */
const EXABYTE_IN_MB = 1024 ** 4;
const OTHER_LIMIT = 1e12;
/** The smallest positive normal double; anything closer to zero is subnormal. */
const MIN_NORMAL = 2 ** -1022;

export function updateQuota(
  m: MasterOps,
  update: QuotaUpdate,
  refusal: (role: string) => string | undefined = () => undefined,
): Outcome {
  for (const request of update.configs) {
    const error = configError(m, request);
    if (error !== undefined) return fail('INVALID', error);
  }
  const configs = update.configs.map(toConfig);
  const error = update.force ? undefined : (consumptionError(m, configs) ?? capacityError(m, configs));
  if (error !== undefined) return fail('INVALID', error);
  const refused = configs.map((c) => refusal(c.role)).find((r) => r !== undefined);
  if (refused !== undefined) return fail('FORBIDDEN', refused);
  for (const config of configs) {
    const reset = config.guarantees.size === 0 && config.limits.size === 0;
    if (reset) m.quotas.delete(config.role);
    else m.quotas.set(config.role, config);
    m.ctx.trace.append('quota:update', {
      role: config.role,
      limits: text(config.limits),
      guarantees: text(config.guarantees),
    });
    if (reset) m.allocator.removeQuota(config.role);
    else m.allocator.setQuota(config.role, config);
  }
  for (const config of configs) rescindForQuota(m, config);
  return done;
}

/** The consumption of a role: unreserved resources in use, plus all reservations (see the file's head). */
export function consumedQuota(m: MasterOps, role: string): Map<string, number> {
  const out = m.totals.reservedToSubtree(role);
  for (const name of m.ledger.roles()) {
    if (!inSubtree(name, role)) continue;
    const unreserved = m.ledger.role(name).used.filter((r) => r.role === '*');
    for (const [resource, milli] of scalarQuantities(unreserved)) out.set(resource, (out.get(resource) ?? 0) + milli);
  }
  return out;
}

// ---- validation ----

function configError(m: MasterOps, request: QuotaConfigRequest): string | undefined {
  const { role } = request;
  const invalidRole = roleError(role);
  if (invalidRole !== undefined) return `Invalid QuotaConfig: Invalid 'QuotaConfig.role': ${invalidRole}`;
  if (role.includes('/')) return `Updating quota on nested role '${role}' is not supported yet`;
  for (const [field, values] of [
    ['guarantees', request.guarantees],
    ['limits', request.limits],
  ] as const) {
    const error = valuesError(m, field, values);
    if (error !== undefined) return `Invalid QuotaConfig: ${error}`;
  }
  const config = toConfig(request);
  if (!contains(config.limits, config.guarantees)) {
    return `Invalid QuotaConfig: 'QuotaConfig.guarantees' ${braces(request.guarantees)} is not contained within the 'QuotaConfig.limits' ${braces(request.limits)}`;
  }
  return undefined;
}

function valuesError(
  m: MasterOps,
  field: 'guarantees' | 'limits',
  values: ReadonlyMap<string, number>,
): string | undefined {
  for (const [name, value] of values) {
    const ceiling = name === 'mem' || name === 'disk' ? EXABYTE_IN_MB : OTHER_LIMIT;
    if (value > ceiling) {
      const what = ceiling === EXABYTE_IN_MB ? `1 exabyte (${EXABYTE_IN_MB})` : `1 trillion (${OTHER_LIMIT})`;
      return `Invalid 'QuotaConfig.${field}': {'${name}': ${value}} is invalid: values greater than ${what} are not supported`;
    }
  }
  const singular = field === 'guarantees' ? 'guarantee' : 'limit';
  for (const [name, value] of values) {
    const error = scalarValueError(value);
    if (error !== undefined) return `Invalid ${singular} configuration {'${name}': ${value}}: ${error}`;
    const type = name === 'ports' ? 'RANGES' : m.totals.typeOf(name);
    if (type !== undefined && type !== 'SCALAR') {
      return `Invalid ${singular} configuration {'${name}': ${value}}: quota supports only scalar resources, and '${name}' is of type ${type}`;
    }
  }
  return undefined;
}

function scalarValueError(value: number): string | undefined {
  if (Number.isNaN(value)) return 'NaN not supported';
  if (!Number.isFinite(value)) return 'Infinite values not supported';
  if (value !== 0 && Math.abs(value) < MIN_NORMAL) return 'Subnormal values not supported';
  if (value < 0) return 'Negative values not supported';
  return undefined;
}

function consumptionError(m: MasterOps, configs: readonly QuotaConfig[]): string | undefined {
  for (const config of configs) {
    const consumed = consumedQuota(m, config.role);
    if (!contains(config.limits, consumed)) {
      return `Invalid QuotaConfig: Role '${config.role}' is already consuming '${text(consumed)}'; this is more than the requested limits '${text(config.limits)}' (use 'force' flag to bypass this check)`;
    }
  }
  return undefined;
}

function capacityError(m: MasterOps, configs: readonly QuotaConfig[]): string | undefined {
  const next = new Map(m.quotas);
  for (const config of configs) next.set(config.role, config);
  const guarantees = new Map<string, number>();
  for (const config of next.values()) {
    for (const [name, milli] of config.guarantees) guarantees.set(name, (guarantees.get(name) ?? 0) + milli);
  }
  const capacity = m.totals.capacity();
  if ([...guarantees].every(([name, milli]) => (capacity.get(name) ?? 0) >= milli)) return undefined;
  return `Invalid QuotaConfig: total quota guarantees '${text(guarantees)}' exceed cluster capacity '${text(capacity)}' (use 'force' flag to bypass this check)`;
}

// ---- rescinding ----

/**
 * Best effort, as upstream: first the role's own offers until consumption
 * plus offers fits the limits, then other roles' offers until what they
 * gave back plus the role's consumption and offers covers its guarantees.
 */
function rescindForQuota(m: MasterOps, config: QuotaConfig): void {
  const held = consumedQuota(m, config.role);
  const mine = (offer: Offer): boolean => inSubtree(offer.role, config.role);
  const offers = [...m.frameworks.values()].flatMap((fw) => [...fw.offers.values()]);
  for (const offer of offers) if (mine(offer)) addTo(held, offer.resources);
  for (const offer of offers) {
    if (contains(config.limits, held)) break;
    if (!mine(offer)) continue;
    subtractFrom(held, offer.resources);
    removeOffer(m, offer, { rescind: true });
  }
  for (const offer of offers) {
    if (covers(held, config.guarantees)) break;
    if (mine(offer) || !m.frameworks.get(offer.frameworkId)?.offers.has(offer.id)) continue;
    addTo(held, offer.resources);
    removeOffer(m, offer, { rescind: true });
  }
}

// ---- quantities ----

function toConfig(request: QuotaConfigRequest): QuotaConfig {
  const milli = (values: ReadonlyMap<string, number>): Quantities =>
    new Map([...values].map(([name, value]) => [name, Math.round(value * 1000)] as const));
  return { role: request.role, guarantees: milli(request.guarantees), limits: milli(request.limits) };
}

/** True when every quantity of `b` is within `a`; names `a` does not list are unbounded when `a` is a limit. */
function contains(limits: Quantities, b: Quantities): boolean {
  for (const [name, milli] of b) {
    const limit = limits.get(name);
    if (limit !== undefined && milli > limit) return false;
  }
  return true;
}

/** True when `have` holds at least every quantity of `want`. */
function covers(have: Quantities, want: Quantities): boolean {
  for (const [name, milli] of want) if ((have.get(name) ?? 0) < milli) return false;
  return true;
}

function addTo(target: Map<string, number>, bag: Resources): void {
  for (const [name, milli] of scalarQuantities(bag)) target.set(name, (target.get(name) ?? 0) + milli);
}

function subtractFrom(target: Map<string, number>, bag: Resources): void {
  for (const [name, milli] of scalarQuantities(bag)) target.set(name, (target.get(name) ?? 0) - milli);
}

/** Upstream's `stringify` of resource quantities: `cpus:1; mem:512`, sorted by name. */
export function text(quantities: Quantities): string {
  const parts = [...quantities].filter(([, milli]) => milli !== 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return parts.length === 0 ? '{}' : parts.map(([name, milli]) => `${name}:${fromMilli(milli)}`).join('; ');
}

function braces(values: ReadonlyMap<string, number>): string {
  return `{ ${[...values].map(([name, value]) => `${name}: ${value}`).join(', ')} }`;
}
