// AgentsKit's `AssistantContentPartSchema` over the wasm core's part rules, for both entries
// (`turnkeep` and `turnkeep/client` pass their own module's `checkAssistantContentPart`).
/**
 * `AssistantContentPartSchema` as AgentsKit's protocol package exports it (a zod schema there):
 * `safeParse(value)` -> `{ success: true, data }` (the part, canonical and frozen) or
 * `{ success: false, error }`, and `parse(value)`, which returns the data or throws that error.
 * `check` is the wasm core's `checkAssistantContentPart`, where the part rules are.
 */
export function assistantContentPartSchema(check) {
  const safeParse = (value) => {
    const result = check(value);
    if (result.ok) return { success: true, data: deepFreeze(result.part) };
    const error = new Error(`Invalid assistant content part: ${result.message}`);
    error.name = 'AssistantContentPartError';
    error.issues = [{ path: result.path ? result.path.split('.') : [], message: result.message }];
    return { success: false, error };
  };
  return Object.freeze({
    safeParse,
    parse(value) {
      const result = safeParse(value);
      if (!result.success) throw result.error;
      return result.data;
    },
  });
}

function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}
