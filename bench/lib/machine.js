// A description of the machine a benchmark ran on, stored with every result.
import os from 'node:os';

export function describeMachine() {
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    node: process.version,
    v8: process.versions.v8,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    cpu: cpus[0]?.model ?? 'unknown',
    cores: os.availableParallelism(),
    memoryBytes: os.totalmem(),
    loadAverage: os.loadavg(),
  };
}
