// CPU time (user + system, all threads) a process has used so far, from /proc/<pid>/stat (Linux).
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's utime and stime: USER_HZ, 100 on Linux. */
const TICKS_PER_SECOND = 100;

/** Milliseconds of CPU the process `pid` has used (10 ms resolution). */
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / TICKS_PER_SECOND;
}
