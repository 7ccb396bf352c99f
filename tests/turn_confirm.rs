//! Tool confirmations resolved over the turn pipeline, on the host: a turn that ends with a call
//! waiting for a person leaves a pending record and frees the session; `resolve` claims the
//! decision and the continuation's lease in one CAS, and only the winner runs the continuation
//! (the tool only on approve). Races, expiry, replays, foreign tokens, storage failures after the
//! claim with reconciliation, and conversation state carried by a definition's statechart.
#![cfg(not(target_arch = "wasm32"))]

mod turn_support;

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::{json, Value};
use turn_support::*;
use turnkeep::core::chat::controller::{CONFIRMATION_EXPIRED, REJECTED};
use turnkeep::core::projection::Projection;
use turnkeep::core::protocol::{BoundaryError, Role, ToolCallStatus};
use turnkeep::core::session::{
    decode_session_snapshot, ConfirmationStatus, ConversationChart, SessionEnvelope,
};
use turnkeep::ports::session::SessionStorage;
use turnkeep::ports::CancelToken;
use turnkeep::storage::MemorySessionStorage;
use turnkeep::turn::{
    admit, list_stuck, open, reconcile, resolve, run, ChatSetup, Interrupt, Ports, ReconcileError,
    Resolution, ResolveRequest, Turn, TurnEnd,
};

const SESSION: &str = "s1";

struct Bench {
    session: Session,
    storage: Rc<LaggyStorage>,
    transfer: Rc<CountingTransfer>,
    chat: ChatSetup,
    memory: Rc<FlakyMemory>,
}

/// The session's memory, whose loads fail while `failing` is set.
struct FlakyMemory {
    inner: Rc<turnkeep::storage::MemoryChatMemory>,
    failing: std::cell::Cell<bool>,
}

impl turnkeep::ports::chat::ChatMemory for FlakyMemory {
    fn load<'a>(
        &'a self,
        cancel: &'a CancelToken,
    ) -> turnkeep::ports::LocalFuture<
        'a,
        Result<Vec<turnkeep::core::protocol::Message>, turnkeep::ports::PortError>,
    > {
        if self.failing.get() {
            return Box::pin(async {
                Err(turnkeep::ports::PortError::new("injected: load failed"))
            });
        }
        self.inner.load(cancel)
    }
    fn save<'a>(
        &'a self,
        messages: &'a [turnkeep::core::protocol::Message],
        fence: Option<u64>,
        cancel: &'a CancelToken,
    ) -> turnkeep::ports::LocalFuture<'a, Result<(), turnkeep::ports::PortError>> {
        self.inner.save(messages, fence, cancel)
    }
}

/// What one resolution request came to.
#[derive(Debug)]
enum Outcome {
    /// It won and ran the continuation; the confirmations its last snapshot showed.
    Ran(TurnEnd, Vec<turnkeep::core::session::Confirmation>),
    Answered(turnkeep::core::session::Confirmation),
    Refused(BoundaryError),
}

impl Outcome {
    fn answered(&self) -> Option<ConfirmationStatus> {
        match self {
            Outcome::Answered(record) => Some(record.status),
            _ => None,
        }
    }
}

impl Bench {
    fn new(lag_ms: u64) -> Self {
        Self::over(&World::new(), Rc::new(MemorySessionStorage::new()), lag_ms)
    }

    fn over(world: &Rc<World>, inner: Rc<MemorySessionStorage>, lag_ms: u64) -> Self {
        let session = Session::new(world);
        let storage = LaggyStorage::new(world, inner, lag_ms);
        let memory = Rc::new(FlakyMemory {
            inner: session.memory.clone(),
            failing: std::cell::Cell::new(false),
        });
        Bench {
            session,
            storage,
            transfer: CountingTransfer::new(),
            chat: chat_setup(SESSION),
            memory,
        }
    }

    fn world(&self) -> &Rc<World> {
        &self.session.world
    }

    fn ports(&self) -> Ports {
        let mut ports = self.session.ports(true, 2);
        ports.storage = self.storage.clone();
        ports.memory = self.memory.clone();
        ports.tools = tools_counting(&self.transfer);
        ports
    }

    fn envelope(&self) -> SessionEnvelope {
        let stored = block_on(
            self.world(),
            self.storage.inner.load(SESSION, &CancelToken::new()),
        )
        .expect("load")
        .expect("stored");
        decode_session_snapshot(&stored).expect("valid")
    }

    /// Runs a submitted turn to its end.
    fn submit(&self, turn_id: &str, input: &str) -> TurnEnd {
        let ports = self.ports();
        let sub = submission(SESSION, turn_id, input);
        let deadline = Interrupt::new();
        block_on(self.world(), async {
            let claim = admit(&ports, &self.chat, &sub, &LIMITS, &deadline)
                .await
                .expect("claimed");
            let opened = open(&ports, &self.chat, &sub, &claim, &LIMITS, &deadline)
                .await
                .expect("opened");
            let turn = Turn::new(ports.clone(), LIMITS, sub.clone(), claim, opened);
            run(turn, Rc::new(Sink::default())).await
        })
    }

    /// `/confirm 250` as turn `t1`: the token of the confirmation it leaves.
    fn propose(&self) -> String {
        let end = self.submit("t1", "/confirm 250");
        assert!(end.released);
        let env = self.envelope();
        assert_eq!(env.confirmations.len(), 1, "{env:?}");
        env.confirmations[0].token.clone()
    }

    async fn resolve_and_run(&self, token: &str, approve: bool, reason: Option<&str>) -> Outcome {
        let ports = self.ports();
        let request = ResolveRequest {
            session_id: SESSION.into(),
            token: token.into(),
            approve,
            reason: reason.map(str::to_owned),
        };
        match resolve(&ports, &self.chat, &request, &LIMITS, &Interrupt::new()).await {
            Ok(Resolution::Continue(turn)) => {
                let end = run(turn.clone(), Rc::new(Sink::default())).await;
                let shown = turn.confirmations().clone();
                Outcome::Ran(end, shown)
            }
            Ok(Resolution::Answered(record)) => Outcome::Answered(record),
            Err(refusal) => Outcome::Refused(refusal.error),
        }
    }

    fn resolve(&self, token: &str, approve: bool, reason: Option<&str>) -> Outcome {
        block_on(self.world(), self.resolve_and_run(token, approve, reason))
    }

    /// `clients` decisions sent at the same moment; the outcome of each.
    fn race(&self, token: &str, decisions: &[bool]) -> Vec<Outcome> {
        let outcomes = RefCell::new(Vec::new());
        let tasks: Vec<Task<'_>> = decisions
            .iter()
            .map(|&approve| {
                let outcomes = &outcomes;
                Box::pin(async move {
                    let outcome = self.resolve_and_run(token, approve, None).await;
                    outcomes.borrow_mut().push(outcome);
                }) as Task<'_>
            })
            .collect();
        run_all(self.world(), tasks);
        outcomes.into_inner()
    }

    fn projection(&self) -> Projection {
        let mut projection = Projection::new();
        projection.feed_all(&self.session.log_store.chunks());
        projection
    }
}

fn winners(outcomes: &[Outcome]) -> usize {
    outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Ran(..)))
        .count()
}

#[test]
fn a_waiting_call_leaves_a_pending_record_and_frees_the_session() {
    let bench = Bench::new(0);
    let started_ms = bench.world().now();
    let end = bench.submit("t1", "/confirm 250");
    assert!(end.released);
    let env = bench.envelope();
    assert_eq!(
        env.active_turn, None,
        "no turn holds the session while a person decides"
    );
    let record = &env.confirmations[0];
    let call = bench
        .session
        .saved()
        .iter()
        .flat_map(|m| m.tool_calls.clone().unwrap_or_default())
        .find(|c| c.name == "transfer")
        .expect("the call");
    assert_eq!(call.status, ToolCallStatus::RequiresConfirmation);
    assert_eq!(record.token, format!("confirm-{}", call.id));
    assert_eq!(record.tool_call_id, call.id);
    assert_eq!(record.action, "transfer");
    assert_eq!(
        Value::Object(record.input.clone()),
        json!({ "amount": 250 })
    );
    assert_eq!(record.status, ConfirmationStatus::Pending);
    let ttl = LIMITS.confirmation_ttl_ms;
    assert!(
        record.expires_at > started_ms + ttl && record.expires_at <= bench.world().now() + ttl,
        "expires one TTL after the turn's work ended"
    );
    assert_eq!(bench.transfer.count(), 0);
    // The log shows it: TanStack's approval request and the run's interrupt name the token.
    let chunks = bench.session.log_store.chunks();
    let approval = chunks
        .iter()
        .find(|c| c["name"] == "approval-requested")
        .expect("approval-requested");
    assert_eq!(approval["value"]["approval"]["id"], json!(record.token));
    let finished = chunks
        .iter()
        .rfind(|c| c["type"] == "RUN_FINISHED")
        .expect("end");
    assert_eq!(finished["outcome"]["type"], "interrupt");
    assert_eq!(
        finished["outcome"]["interrupts"][0]["id"],
        json!(record.token)
    );
    assert_eq!(finished["finishReason"], "tool_calls");
    let shown = bench.projection();
    assert_eq!(shown.confirmations().len(), 1);
    assert_eq!(shown.confirmations()[0].token, record.token);
    assert_eq!(shown.confirmations()[0].expires_at, Some(record.expires_at));
    assert_eq!(shown.confirmations()[0].status, ConfirmationStatus::Pending);
    assert_eq!(shown.to_messages(), bench.session.saved());
}

#[test]
fn approve_runs_the_tool_once_with_the_token_and_the_model_continues() {
    let bench = Bench::new(0);
    let token = bench.propose();
    let Outcome::Ran(end, shown) = bench.resolve(&token, true, None) else {
        panic!("the decision must win")
    };
    assert!(end.released && end.last_line.is_none(), "{end:?}");
    assert_eq!(*bench.transfer.runs.borrow(), vec![Some(token.clone())]);
    let env = bench.envelope();
    assert_eq!(env.confirmations[0].status, ConfirmationStatus::Approved);
    assert_eq!(env.active_turn, None);
    assert!(
        env.terminal_turn(&token).is_some(),
        "the continuation's turn id is the token"
    );
    assert_eq!(
        shown[0].status,
        ConfirmationStatus::Approved,
        "the last snapshot says so"
    );
    let saved = bench.session.saved();
    let tool = saved.iter().find(|m| m.role == Role::Tool).expect("result");
    assert_eq!(tool.content, "transferred 250");
    assert_eq!(saved.last().unwrap().content, "transfer: transferred 250");
    assert_eq!(
        bench.projection().to_messages(),
        saved,
        "the log projects to the messages"
    );
    let states: Vec<Value> = bench
        .session
        .log_store
        .chunks()
        .into_iter()
        .filter(|c| c["name"] == "turnkeep.confirmation")
        .map(|c| c["value"]["status"].clone())
        .collect();
    assert_eq!(
        states,
        vec![json!("pending"), json!("approving"), json!("approved")],
        "proposed by the first turn, claimed and finished by the continuation"
    );
    assert_eq!(
        bench.projection().confirmations()[0].status,
        ConfirmationStatus::Approved
    );
    // A replayed approve runs nothing again.
    assert_eq!(
        bench.resolve(&token, true, None).answered(),
        Some(ConfirmationStatus::Approved)
    );
    assert_eq!(bench.transfer.count(), 1);
}

#[test]
fn reject_feeds_the_denial_to_the_model_and_never_runs_the_tool() {
    let bench = Bench::new(0);
    let token = bench.propose();
    let Outcome::Ran(end, _) = bench.resolve(&token, false, Some("not today")) else {
        panic!("the decision must win")
    };
    assert!(end.released);
    assert_eq!(bench.transfer.count(), 0);
    assert_eq!(
        bench.envelope().confirmations[0].status,
        ConfirmationStatus::Rejected
    );
    let saved = bench.session.saved();
    let call = saved
        .iter()
        .flat_map(|m| m.tool_calls.clone().unwrap_or_default())
        .next()
        .unwrap();
    assert_eq!(call.status, ToolCallStatus::Error);
    let denial = format!("{REJECTED} Reason: not today");
    assert_eq!(call.error.as_deref(), Some(denial.as_str()));
    assert_eq!(saved.last().unwrap().content, format!("transfer: {denial}"));
    assert_eq!(bench.projection().to_messages(), saved);
}

#[test]
fn approve_and_reject_raced_from_two_clients_one_wins_the_other_gets_the_final_state() {
    for order in [[true, false], [false, true]] {
        let bench = Bench::new(3);
        let token = bench.propose();
        let outcomes = bench.race(&token, &order);
        assert_eq!(winners(&outcomes), 1, "{outcomes:?}");
        let final_status = bench.envelope().confirmations[0].status;
        assert!(final_status.is_final());
        for outcome in &outcomes {
            if let Some(status) = outcome.answered() {
                assert_eq!(status, final_status, "the loser gets the final state");
            }
        }
        let ran = usize::from(final_status == ConfirmationStatus::Approved);
        assert_eq!(bench.transfer.count(), ran, "{order:?}");
    }
}

#[test]
fn twenty_concurrent_approves_run_the_tool_once() {
    let bench = Bench::new(3);
    let token = bench.propose();
    let outcomes = bench.race(&token, &[true; 20]);
    assert_eq!(winners(&outcomes), 1, "{outcomes:?}");
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| o.answered() == Some(ConfirmationStatus::Approved))
            .count(),
        19,
        "{outcomes:?}"
    );
    assert_eq!(bench.transfer.count(), 1);
    assert_eq!(bench.projection().to_messages(), bench.session.saved());
}

#[test]
fn an_expired_confirmation_resolves_expired_and_the_tool_never_runs() {
    let bench = Bench::new(0);
    let token = bench.propose();
    bench.world().advance(LIMITS.confirmation_ttl_ms);
    let Outcome::Ran(end, shown) = bench.resolve(&token, true, None) else {
        panic!("the expiry is carried out by the one winner")
    };
    assert!(end.released);
    assert_eq!(bench.transfer.count(), 0);
    assert_eq!(shown[0].status, ConfirmationStatus::Expired);
    assert_eq!(
        bench.envelope().confirmations[0].status,
        ConfirmationStatus::Expired
    );
    let call = bench
        .session
        .saved()
        .iter()
        .flat_map(|m| m.tool_calls.clone().unwrap_or_default())
        .next()
        .unwrap();
    assert_eq!(call.error.as_deref(), Some(CONFIRMATION_EXPIRED));
    assert_eq!(
        bench.resolve(&token, true, None).answered(),
        Some(ConfirmationStatus::Expired)
    );
    assert_eq!(bench.transfer.count(), 0);
}

#[test]
fn tokens_of_another_session_or_tenant_are_not_found_and_change_nothing() {
    let world = World::new();
    let tenant_a = Rc::new(MemorySessionStorage::new());
    let a = Bench::over(&world, tenant_a.clone(), 0);
    let token = a.propose();
    let before = a.envelope();
    // Another tenant: the host hands out another store; the same session id holds nothing.
    let b = Bench::over(&world, Rc::new(MemorySessionStorage::new()), 0);
    b.submit("b1", "hello");
    assert!(matches!(
        b.resolve(&token, true, None),
        Outcome::Refused(BoundaryError::ConfirmationNotFound)
    ));
    // Another session of the same tenant.
    let mut other = Bench::over(&world, tenant_a, 0);
    other.chat = chat_setup("s2");
    assert!(matches!(
        block_on(&world, async {
            let request = ResolveRequest {
                session_id: "s2".into(),
                token: token.clone(),
                approve: true,
                reason: None,
            };
            resolve(
                &other.ports(),
                &other.chat,
                &request,
                &LIMITS,
                &Interrupt::new(),
            )
            .await
            .err()
            .map(|r| r.error)
        }),
        Some(BoundaryError::ConfirmationNotFound)
    ));
    assert!(matches!(
        a.resolve("confirm-nope", true, None),
        Outcome::Refused(BoundaryError::ConfirmationNotFound)
    ));
    assert_eq!(a.envelope(), before, "nothing changed");
    assert_eq!(a.transfer.count() + b.transfer.count(), 0);
}

#[test]
fn a_decision_while_a_turn_runs_is_busy_and_changes_nothing() {
    let bench = Bench::new(0);
    let token = bench.propose();
    let ports = bench.ports();
    let sub = submission(SESSION, "t2", "/words 20");
    let busy = block_on(bench.world(), async {
        let deadline = Interrupt::new();
        let claim = admit(&ports, &bench.chat, &sub, &LIMITS, &deadline)
            .await
            .unwrap();
        let outcome = bench.resolve_and_run(&token, true, None).await;
        turnkeep::turn::abandon(&ports, &claim.envelope, &LIMITS).await;
        outcome
    });
    assert!(
        matches!(busy, Outcome::Refused(BoundaryError::SessionBusy)),
        "{busy:?}"
    );
    assert_eq!(
        bench.envelope().confirmations[0].status,
        ConfirmationStatus::Pending
    );
    assert!(matches!(
        bench.resolve(&token, true, None),
        Outcome::Ran(..)
    ));
    assert_eq!(bench.transfer.count(), 1);
}

#[test]
fn a_storage_failure_after_the_claim_leaves_a_processing_record_that_reconciliation_finishes() {
    let bench = Bench::new(1);
    let token = bench.propose();
    let ports = bench.ports();
    let request = ResolveRequest {
        session_id: SESSION.into(),
        token: token.clone(),
        approve: true,
        reason: None,
    };
    let end = block_on(bench.world(), async {
        let Ok(Resolution::Continue(turn)) =
            resolve(&ports, &bench.chat, &request, &LIMITS, &Interrupt::new()).await
        else {
            panic!("claimed")
        };
        bench.storage.fail_saves.set(true); // the store goes down after the claim
        run(turn, Rc::new(Sink::default())).await
    });
    bench.storage.fail_saves.set(false);
    assert!(!end.released);
    assert_eq!(bench.transfer.count(), 1);
    let env = bench.envelope();
    assert_eq!(env.confirmations[0].status, ConfirmationStatus::Approving);
    let chat = &bench.chat;
    let deadline = Interrupt::new();
    // While its lease is live it is not stuck: the continuation may still be finishing.
    let (stuck, early) = block_on(bench.world(), async {
        (
            list_stuck(&ports, chat, SESSION, &deadline).await.unwrap(),
            reconcile(&ports, chat, SESSION, &token, None, &LIMITS, &deadline).await,
        )
    });
    assert!(stuck.is_empty());
    assert_eq!(
        early,
        Err(ReconcileError::NotStuck(ConfirmationStatus::Approving))
    );
    // A decision sent meanwhile is answered with the processing state, and runs nothing.
    assert_eq!(
        bench.resolve(&token, true, None).answered(),
        Some(ConfirmationStatus::Approving)
    );
    bench.world().advance(LIMITS.lease_ms);
    let (stuck, done, again) = block_on(bench.world(), async {
        (
            list_stuck(&ports, chat, SESSION, &deadline).await.unwrap(),
            reconcile(&ports, chat, SESSION, &token, None, &LIMITS, &deadline).await,
            reconcile(&ports, chat, SESSION, &token, None, &LIMITS, &deadline).await,
        )
    });
    assert_eq!(stuck.len(), 1);
    assert_eq!(stuck[0].token, token);
    assert_eq!(done.map(|r| r.status), Ok(ConfirmationStatus::Approved));
    assert_eq!(
        again.map(|r| r.status),
        Ok(ConfirmationStatus::Approved),
        "idempotent"
    );
    let env = bench.envelope();
    assert_eq!(env.confirmations[0].status, ConfirmationStatus::Approved);
    assert_eq!(env.active_turn, None, "the lapsed lease is cleared");
    assert_eq!(
        bench.resolve(&token, true, None).answered(),
        Some(ConfirmationStatus::Approved)
    );
    assert_eq!(bench.transfer.count(), 1, "the tool ran at most once");
    // The session is usable again.
    assert!(bench.submit("t3", "hello").released);
}

#[test]
fn a_host_may_reconcile_into_another_final_state_but_not_a_pending_one() {
    let bench = Bench::new(0);
    let token = bench.propose();
    let ports = bench.ports();
    let deadline = Interrupt::new();
    let pending = block_on(bench.world(), async {
        reconcile(
            &ports,
            &bench.chat,
            SESSION,
            &token,
            None,
            &LIMITS,
            &deadline,
        )
        .await
    });
    assert_eq!(
        pending,
        Err(ReconcileError::NotStuck(ConfirmationStatus::Pending))
    );
    let unknown = block_on(bench.world(), async {
        reconcile(
            &ports,
            &bench.chat,
            SESSION,
            "confirm-x",
            None,
            &LIMITS,
            &deadline,
        )
        .await
    });
    assert_eq!(unknown, Err(ReconcileError::NotFound));
    // A claim whose continuation never ran (the process died right after the claim).
    let request = ResolveRequest {
        session_id: SESSION.into(),
        token: token.clone(),
        approve: true,
        reason: None,
    };
    let claimed = block_on(bench.world(), async {
        resolve(&ports, &bench.chat, &request, &LIMITS, &deadline).await
    });
    assert!(matches!(claimed, Ok(Resolution::Continue(_))));
    drop(claimed);
    bench.world().advance(LIMITS.lease_ms);
    let chosen = block_on(bench.world(), async {
        let bad = reconcile(
            &ports,
            &bench.chat,
            SESSION,
            &token,
            Some(ConfirmationStatus::Approving),
            &LIMITS,
            &deadline,
        )
        .await;
        let good = reconcile(
            &ports,
            &bench.chat,
            SESSION,
            &token,
            Some(ConfirmationStatus::Rejected),
            &LIMITS,
            &deadline,
        )
        .await;
        (bad, good)
    });
    assert_eq!(chosen.0, Err(ReconcileError::InvalidResolution));
    assert_eq!(chosen.1.map(|r| r.status), Ok(ConfirmationStatus::Rejected));
    assert_eq!(bench.transfer.count(), 0);
}

#[test]
fn a_continuation_that_cannot_load_its_messages_gives_the_decision_back() {
    let bench = Bench::new(0);
    let token = bench.propose();
    let saved = bench.session.saved();
    bench.memory.failing.set(true);
    assert!(matches!(
        bench.resolve(&token, true, None),
        Outcome::Refused(BoundaryError::Internal)
    ));
    let env = bench.envelope();
    assert_eq!(env.confirmations[0].status, ConfirmationStatus::Pending);
    assert_eq!(env.active_turn, None);
    bench.memory.failing.set(false);
    assert_eq!(bench.session.saved(), saved);
    assert!(matches!(
        bench.resolve(&token, true, None),
        Outcome::Ran(..)
    ));
    assert_eq!(bench.transfer.count(), 1);
}

#[test]
fn a_record_whose_call_no_longer_waits_runs_nothing() {
    let bench = Bench::new(0);
    let token = bench.propose();
    // The conversation was rewritten by hand: the call is gone.
    block_on(bench.world(), async {
        use turnkeep::ports::chat::ChatMemory;
        bench
            .session
            .memory
            .save(&[], None, &CancelToken::new())
            .await
            .unwrap();
    });
    assert!(matches!(
        bench.resolve(&token, true, None),
        Outcome::Refused(BoundaryError::ConfirmationUnavailable)
    ));
    assert_eq!(
        bench.envelope().confirmations[0].status,
        ConfirmationStatus::Pending
    );
    assert_eq!(
        bench.resolve(&token, false, None).answered(),
        Some(ConfirmationStatus::Rejected),
        "a rejection needs nothing to run"
    );
    assert_eq!(bench.envelope().active_turn, None);
    assert_eq!(bench.transfer.count(), 0);
}

/// The chart of `tests/fixtures/session/v1_full.json`'s conversation.
fn chart() -> ConversationChart {
    let mut chart = ConversationChart::single_state("start");
    chart
        .states
        .insert("collect_details".into(), Default::default());
    chart
        .states
        .get_mut("start")
        .unwrap()
        .insert("refund_requested".into(), "collect_details".into());
    chart.routes.push(turnkeep::core::session::ChartRoute {
        id: "refund".into(),
        event: "refund_requested".into(),
        states: None,
    });
    chart
}

#[test]
fn stored_conversation_state_is_resumed_and_carried_or_refused_with_its_diagnostic() {
    let world = World::new();
    let inner = Rc::new(MemorySessionStorage::new());
    let mut stored: Value =
        serde_json::from_str(include_str!("fixtures/session/v1_full.json")).unwrap();
    stored["sessionId"] = json!(SESSION);
    stored["definitionId"] = json!("demo");
    stored["definitionRevision"] = json!(1);
    stored.as_object_mut().unwrap().remove("activeTurn");
    block_on(&world, inner.save(&stored, None, &CancelToken::new())).unwrap();
    let mut bench = Bench::over(&world, inner, 0);
    // A definition without a statechart cannot accept it: the typed diagnostic, not a 500.
    let ports = bench.ports();
    let refused = block_on(&world, async {
        admit(
            &ports,
            &bench.chat,
            &submission(SESSION, "x", "hi"),
            &LIMITS,
            &Interrupt::new(),
        )
        .await
        .err()
    })
    .expect("refused");
    assert_eq!(refused.error, BoundaryError::SessionIncompatible);
    assert_eq!(BoundaryError::SessionIncompatible.status(), 409);
    assert!(refused.fault.is_some(), "the detail goes to the operator");
    // The definition's chart replays it: turns run and the conversation is carried unchanged.
    bench.chat.identity.conversation = Some(chart());
    let end = bench.submit("t9", "hello");
    assert!(end.released);
    let env = bench.envelope();
    assert_eq!(
        env.conversation,
        decode_session_snapshot(&stored).unwrap().conversation
    );
    assert_eq!(env.confirmations.len(), 2, "stored records are carried too");
    // A chart its decisions do not replay through is refused the same way.
    bench.chat.identity.conversation = Some(ConversationChart::single_state("start"));
    let refused = block_on(&world, async {
        admit(
            &bench.ports(),
            &bench.chat,
            &submission(SESSION, "y", "hi"),
            &LIMITS,
            &Interrupt::new(),
        )
        .await
        .err()
    })
    .expect("refused");
    assert_eq!(refused.error, BoundaryError::SessionIncompatible);
}
