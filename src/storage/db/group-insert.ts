// Group commit for rows that many requests insert at once (access tokens as partners mint them):
// rows that arrive while a write is in flight are written together by the next one, as one
// multi-row INSERT. One commit then serves many callers: one WAL append on SQLite, where every
// commit runs on the event loop; one WAL flush on PostgreSQL. Each caller is answered only once its
// own row is committed, so nothing is acknowledged that a crash could lose.

/** Writes rows in one statement; rejects when any row is refused. */
export type WriteRows<Row> = (rows: Row[]) => Promise<void>;

interface Waiting<Row> {
  row: Row;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Rows per statement at most: PostgreSQL takes 65,535 parameters per statement. */
const MAX_ROWS = 500;

export class GroupInsert<Row> {
  private waiting: Waiting<Row>[] = [];
  private writing = false;

  constructor(private readonly write: WriteRows<Row>) {}

  /** Resolves once `row` is committed, with the rows of other callers or alone. */
  insert(row: Row): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ row, resolve, reject });
      // The first row of a group waits for the end of this turn of the event loop, so the requests
      // that the same read of the sockets brought in join it.
      if (!this.writing) {
        this.writing = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0) {
      const group = this.waiting.splice(0, MAX_ROWS);
      await this.writeGroup(group);
    }
    this.writing = false;
  }

  /** A refused group is written again row by row: one bad row fails its own caller only. */
  private async writeGroup(group: Waiting<Row>[]): Promise<void> {
    try {
      await this.write(group.map((w) => w.row));
      for (const w of group) w.resolve();
      return;
    } catch (err) {
      if (group.length === 1) {
        group[0]!.reject(err);
        return;
      }
    }
    for (const w of group) {
      try {
        await this.write([w.row]);
        w.resolve();
      } catch (err) {
        w.reject(err);
      }
    }
  }
}
