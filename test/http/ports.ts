/** Ports of this machine as a test finds them. */
import net from 'node:net';

/** Whether a port on 127.0.0.1 can be had now (a listener let go of it, or nothing else holds it). */
export async function portFree(port: number): Promise<boolean> {
  const probe = net.createServer();
  const ok = await new Promise<boolean>((resolve) =>
    probe.once('error', () => resolve(false)).listen({ host: '127.0.0.1', port }, () => resolve(true)),
  );
  if (ok) await new Promise((resolve) => probe.close(resolve));
  return ok;
}
