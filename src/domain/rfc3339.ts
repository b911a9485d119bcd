/**
 * RFC 3339 date-times (section 5.6) as list bounds. Stored times are ISO strings to the millisecond, so a
 * bound is brought to the millisecond in the direction that keeps the comparison exact: a bound with digits
 * below the millisecond is rounded up, since `created_at >= 10.5041` holds exactly when
 * `created_at >= 10.505`, and `created_at < 10.504999` exactly when `created_at < 10.505`. Truncating put
 * items on the wrong side of such a bound.
 */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * The instant of an RFC 3339 date-time in milliseconds, rounded up to the next millisecond when it has
 * digits below one; null when it is not one. `t`/`z` are accepted in lower case (the RFC's ABNF is case
 * insensitive). A leap second (`:60`) is the instant the next second begins: UTC times stored here have
 * none, so every stored time before it is also before that instant.
 */
export function rfc3339Millis(text: string): number | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac = "", zone] = m;
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(Number(y), month) || hour > 23 || minute > 59 || second > 60) return null;
  let offset = 0;
  if (zone !== "Z" && zone !== "z") {
    const oh = Number(zone.slice(1, 3));
    const om = Number(zone.slice(4, 6));
    if (oh > 23 || om > 59) return null;
    offset = (zone[0] === "-" ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  // Date.UTC reads years 0 to 99 as 1900 to 1999: the year is set on its own.
  const at = new Date(Date.UTC(2000, month - 1, day, hour, minute, Math.min(second, 59)));
  at.setUTCFullYear(Number(y), month - 1, day);
  const base = at.getTime() - offset;
  if (second === 60) return base + 1000;
  const ms = Number((frac + "000").slice(0, 3));
  const below = /[1-9]/.test(frac.slice(3)) ? 1 : 0;
  return base + ms + below;
}

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}
