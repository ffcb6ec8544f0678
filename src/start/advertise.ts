/**
 * `advertiseHost` (`--advertise-host`): the host the cluster writes where
 * clients read where to go (the master's MasterInfo and pid, `/redirect`'s
 * `Location`, each agent's AgentInfo, pid and its URL in offers), while the
 * servers bind to `host`. In a container the servers bind to `0.0.0.0` and
 * advertise the name clients reach them by (`localhost` through published
 * ports, a service name on a container network). Part of the composition
 * root, with cluster.ts.
 */
import { StartError } from './errors.js';

/** Host names (letters, digits, `-`, dots) and IPv4 addresses. */
const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

/** The host to advertise: `advertiseHost` checked, else the bind host. */
export function advertisedHost(
  options: { readonly advertiseHost?: string; readonly agentAddressing?: string },
  host: string,
): string {
  const advertise = options.advertiseHost;
  if (advertise === undefined) return host;
  if (!HOST_NAME.test(advertise))
    throw new StartError(`--advertise-host must be a host name or an IPv4 address, got '${advertise}'`);
  if (advertise === '0.0.0.0')
    throw new StartError("--advertise-host must be an address clients can reach, not '0.0.0.0'");
  // Loopback agents are told apart by their own addresses, which are what they advertise.
  if (options.agentAddressing === 'loopback')
    throw new StartError(
      '--advertise-host applies to --agent-addressing ports: loopback agents advertise their own addresses',
    );
  return advertise;
}
