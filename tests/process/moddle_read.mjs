// Read BPMN XML files with bpmn-moddle (as bpmn-js does) and print their warnings as JSON.
// Usage: node moddle_read.mjs flowdesk-moddle.json file.bpmn...
import { readFileSync } from 'node:fs';
import { BpmnModdle } from 'bpmn-moddle';

const [extension, ...files] = process.argv.slice(2);
const moddle = new BpmnModdle({ flowdesk: JSON.parse(readFileSync(extension, 'utf8')) });
const results = {};
for (const file of files) {
  try {
    const { warnings } = await moddle.fromXML(readFileSync(file, 'utf8'), 'bpmn:Definitions');
    results[file] = warnings.map((w) => w.message);
  } catch (error) {
    results[file] = [`error: ${error.message}`];
  }
}
process.stdout.write(JSON.stringify(results));
