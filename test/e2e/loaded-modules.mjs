// Preloaded into an agent process (`node --import`) by AgentProcess's `builtinModulesFile`: when the process exits, it
// writes the built-in modules it loaded (process.moduleLoadList's NativeModule entries), one per line, to
// EXTENDED_DEPLOYMENT_TEST_MODULES_FILE.
import { writeFileSync } from 'node:fs';

process.on('exit', () => {
  const prefix = 'NativeModule ';
  const modules = process.moduleLoadList.filter((m) => m.startsWith(prefix)).map((m) => m.slice(prefix.length));
  writeFileSync(process.env.EXTENDED_DEPLOYMENT_TEST_MODULES_FILE, `${modules.join('\n')}\n`);
});
