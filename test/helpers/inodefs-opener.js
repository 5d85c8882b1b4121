// Tries InodeFS.open(argv[2]) once and prints what happened as JSON:
// { nativeAvailable, opened, owner (the content of /owner), code, message }.
import { nativeAvailable } from '../../lib/native.js';
import { InodeFS } from '../../lib/meta/index.js';

const result = { nativeAvailable, opened: false };
try {
  const ifs = await InodeFS.open(process.argv[2]);
  result.opened = true;
  result.owner = await ifs.readFile('/owner', 'utf8');
  ifs.close();
} catch (error) {
  result.code = error.code;
  result.message = error.message;
}
console.log(JSON.stringify(result));
