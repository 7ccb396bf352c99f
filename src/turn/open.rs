//! Stage 2 of a turn: the conversation so far and the controller with the user's input sent
//! (before any model or tool runs) and that conversation saved, so the turn is acknowledged only
//! once its user message is durable; or, for a retry of a turn whose lease lapsed, the
//! controller resumed from the turn's journal (`core::session::journal`). A failure here gives
//! the claim up at once (see [`super::admit::abandon`] and [`super::admit::lapse`]).

use super::admit::{abandon, lapse, Claim};
use super::commit::GiveUp;
use super::context::{ChatSetup, Ports, Submission, TurnLimits};
use super::fault::{Refusal, Stage};
use super::interrupt::Interrupt;
use turnkeep_core::chat::controller::{Action, ChatController, UserInput};
use turnkeep_core::protocol::BoundaryError;
use turnkeep_core::sequence::TurnSequencer;
use turnkeep_core::session::{journal_of, replay_history, TurnJournal};
use turnkeep_ports::PortError;

/// A turn ready to run: nothing has been streamed or published yet.
pub struct Opened {
    pub controller: ChatController,
    /// The action that starts the model.
    pub first: Action,
    /// How many messages the conversation had before this turn.
    pub history_len: usize,
    /// True when that history came from `ChatMemory` (earlier turns saved it, and published it
    /// to the log if there was one); false when it is the definition's initial messages.
    pub history_from_memory: bool,
    /// Where the turn's own messages start (what its journal records): after the history, or
    /// after the last user message for a regeneration.
    pub own_from: usize,
    /// True when the turn replays its journal (a retry of a turn whose lease lapsed).
    pub replayed: bool,
}

/// Loads the messages (under `deadline`), sends the input and saves the user's message. On
/// failure the claim is given up: abandoned when nothing was written, lapsed once the user's
/// message may have been saved (so the next claim re-syncs the log).
pub async fn open(
    ports: &Ports,
    chat: &ChatSetup,
    submission: &Submission,
    claim: &Claim,
    limits: &TurnLimits,
    deadline: &Interrupt,
) -> Result<Opened, Refusal> {
    match try_open(ports, chat, submission, claim, deadline).await {
        Ok(opened) => Ok(opened),
        Err((refusal, GiveUp::Abandon)) => {
            abandon(ports, &claim.envelope, limits).await;
            Err(refusal)
        }
        Err((refusal, GiveUp::Lapse)) => {
            lapse(ports, &claim.envelope, limits).await;
            Err(refusal)
        }
    }
}

async fn try_open(
    ports: &Ports,
    chat: &ChatSetup,
    submission: &Submission,
    claim: &Claim,
    deadline: &Interrupt,
) -> Result<Opened, (Refusal, GiveUp)> {
    let nothing_written = |refusal: Refusal| (refusal, GiveUp::Abandon);
    let journal = journal_of(&claim.envelope, &submission.turn_id);
    let (mut controller, mut history) =
        controller_over_history(ports, chat, claim, journal, deadline)
            .await
            .map_err(nothing_written)?;
    let ids = ports.ids.as_ref();
    let mut next_id = |p: &str| ids.next_id(p);
    let now_ms = ports.clock.now_ms();
    let input = UserInput {
        text: submission.input.clone(),
        id: submission.message.id.clone(),
        files: submission.message.files.clone(),
        metadata: submission.message.metadata.clone(),
    };
    // A retry whose earlier claim saved its message (and recorded no journal) answers that
    // message: sent once, saved once.
    let saved_already = claim.retried && journal.is_none() && controller.ends_with_sent(&input);
    let sends = journal.is_none() && !submission.regenerate && !saved_already;
    let first = if let Some(journal) = journal {
        history.replayed = true;
        controller.resume(journal.messages.clone(), now_ms, &mut next_id)
    } else if sends {
        controller.send_message(&input, now_ms, &mut next_id)
    } else {
        let first = controller.regenerate(now_ms, &mut next_id);
        // regenerate keeps the history up to the last user message and adds one assistant message
        history.own_from = controller.state().messages.len().saturating_sub(1);
        first
    }
    .map_err(|_| nothing_written(BoundaryError::InvalidEvent.into()))?;
    // Only a new message needs keeping: a replay's and a regeneration's are saved already.
    if sends {
        keep_user_message(ports, claim, &controller, history.len, deadline)
            .await
            .map_err(|refusal| (refusal, GiveUp::Lapse))?;
    }
    Ok(history.opened(controller, first))
}

/// Saves the conversation with the user's new message before the turn is acknowledged (its
/// answer starts only after `open`). A turn that later outlives its lease and is taken over by
/// another claim saves nothing at its end (`run::finish`: it is a zombie); its user message is
/// then already in the conversation the newer claim loads, so an acknowledged message is never
/// lost — only the answer of a turn that ended `indeterminate`. The lease is checked after the
/// save: a save that ended after the lease lapsed may have landed after a newer claim loaded the
/// conversation, so such a turn is refused (`SESSION_CONFLICT`, retryable) rather than
/// acknowledged.
async fn keep_user_message(
    ports: &Ports,
    claim: &Claim,
    controller: &ChatController,
    history_len: usize,
    deadline: &Interrupt,
) -> Result<(), Refusal> {
    // The history and the user's message; not the answer's placeholder that follows it.
    let messages = &controller.state().messages;
    let kept = &messages[..(history_len + 1).min(messages.len())];
    deadline
        .guard(async {
            ports
                .memory
                .save(kept, Some(claim.generation()), deadline.token())
                .await
                .map_err(|e| Refusal::internal(Stage::MemorySave, e))
        })
        .await?;
    if claim.lapsed_at(ports.clock.now_ms()) {
        return Err(BoundaryError::SessionConflict.into());
    }
    Ok(())
}

/// The conversation a turn starts from.
pub(crate) struct History {
    len: usize,
    from_memory: bool,
    own_from: usize,
    replayed: bool,
}

impl History {
    pub(crate) fn opened(self, controller: ChatController, first: Action) -> Opened {
        Opened {
            controller,
            first,
            history_len: self.len,
            history_from_memory: self.from_memory,
            own_from: self.own_from,
            replayed: self.replayed,
        }
    }
}

/// A controller over the saved messages (or the definition's initial messages when none are
/// saved), loaded under `deadline`; nothing sent yet. With the turn's `journal` the history is
/// what preceded the turn ([`replay_history`]).
pub(crate) async fn controller_over_history(
    ports: &Ports,
    chat: &ChatSetup,
    claim: &Claim,
    journal: Option<&TurnJournal>,
    deadline: &Interrupt,
) -> Result<(ChatController, History), Refusal> {
    // The sequences of this turn's lines derive from the claim; refuse before anything runs.
    TurnSequencer::new(claim.generation()).map_err(|_| BoundaryError::Internal)?;
    let loaded = deadline
        .guard(async {
            ports
                .memory
                .load(deadline.token())
                .await
                .map_err(|e| Refusal::internal(Stage::MemoryLoad, e))
        })
        .await?;
    let from_memory = !loaded.is_empty();
    let history = if from_memory {
        loaded
    } else {
        chat.initial_messages.clone()
    };
    let history = match journal {
        Some(journal) => replay_history(journal, history).map_err(|mismatch| {
            Refusal::internal(Stage::MemoryLoad, PortError::new(mismatch.to_string()))
        })?,
        None => history,
    };
    let len = history.len();
    let controller = ChatController::new(chat.config.clone(), history);
    let history = History {
        len,
        from_memory,
        own_from: len,
        replayed: false,
    };
    Ok((controller, history))
}
