/**
 * Ids in the upstream formats: a master id is a UUID; frameworks are
 * `<masterId>-0000`, agents `<masterId>-S0`, offers `<masterId>-O0`, each
 * counter starting at zero on every master.
 */
export class IdGenerator {
  #frameworks = 0;
  #agents = 0;
  #offers = 0;

  constructor(readonly masterId: string) {}

  framework(): string {
    return `${this.masterId}-${String(this.#frameworks++).padStart(4, '0')}`;
  }

  agent(): string {
    return `${this.masterId}-S${this.#agents++}`;
  }

  offer(): string {
    return `${this.masterId}-O${this.#offers++}`;
  }
}
