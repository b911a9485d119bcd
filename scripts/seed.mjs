// PLACEHOLDER (owned by the platform work): creates the demo organisation in region `us` with an API key
// holding every permission, and prints the key and a first curl command.
export async function seedDemo(base) {
  console.log(`\nCountersign is running at ${base}\n  curl ${base}/health\n`);
}
