// A child process for the kill -9 tests: opens the workspace in argv[2],
// says "ready" on stdout, then runs one operation (argv[3]: restore <id> |
// snapshot) with durable = argv[5] === 'durable', and says "done".
import { Workspace } from '../../lib/snapshot/index.js';

const [dir, operation, id, durability] = process.argv.slice(2);
const workspace = await Workspace.open(dir);
process.stdout.write('ready\n');
const durable = durability === 'durable';
if (operation === 'restore') await workspace.restore(id, { force: true, durable });
else await workspace.snapshot({ message: 'from the child', durable });
process.stdout.write('done\n');
