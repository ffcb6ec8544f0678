/**
 * Ids in the upstream formats: a master id is a UUID; frameworks are
 * `<masterId>-0000`, agents `<masterId>-S0`, offers `<masterId>-O0`, each
 * counter starting at zero on every master.
 */
export class IdGenerator {
  #frameworks = 0;
  #agents = 0;
  #offers = 0;
  #launches = 0;

  constructor(readonly masterId: string) {}

  /**
   * The next framework id not `taken`: a client may subscribe with an id
   * of its choosing (upstream accepts one it never issued, as after a
   * master failover), so the sequence skips ids already in use.
   */
  framework(taken: (id: string) => boolean = () => false): string {
    for (;;) {
      const id = `${this.masterId}-${String(this.#frameworks++).padStart(4, '0')}`;
      if (!taken(id)) return id;
    }
  }

  agent(): string {
    return `${this.masterId}-S${this.#agents++}`;
  }

  offer(): string {
    return `${this.masterId}-O${this.#offers++}`;
  }

  /** One launch message to an agent: a repeat of it (the network's) has the same id; a task launched again gets a new one. */
  launch(): string {
    return `${this.masterId}-L${this.#launches++}`;
  }
}
