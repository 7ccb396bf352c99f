// GET /api/ui/transfers: every execution of the demo's `transfer` tool for the signed-in user
// (its side effect, so an approval that ran the tool twice would show here twice).
import { stores } from '../../../../lib/stores';
import { userOf } from '../../../../lib/chat';

export const runtime = 'nodejs';

export async function GET(request: Request) {
  const user = userOf(request);
  if (!user) return Response.json({ error: 'sign in first' }, { status: 401 });
  return Response.json({ transfers: await (await stores()).transfers(user) });
}
