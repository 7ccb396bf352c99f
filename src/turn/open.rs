//! Stage 2 of a turn: the conversation so far and the controller with the user's input sent
//! (design §3 step 6). A failure here gives the claim up at once (see [`super::admit::abandon`]).

use super::admit::{abandon, Claim};
use super::context::{ChatSetup, Ports, Submission, TurnLimits};
use super::fault::{Refusal, Stage};
use super::interrupt::Interrupt;
use crate::core::chat::controller::{Action, ChatController};
use crate::core::protocol::BoundaryError;
use crate::core::sequence::TurnSequencer;

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
}

/// Loads the messages (under `deadline`) and sends the input. On failure the claim is abandoned.
pub async fn open(
    ports: &Ports,
    chat: &ChatSetup,
    submission: &Submission,
    claim: &Claim,
    limits: &TurnLimits,
    deadline: &Interrupt,
) -> Result<Opened, Refusal> {
    let opened = try_open(ports, chat, submission, claim, deadline).await;
    if opened.is_err() {
        abandon(ports, &claim.envelope, limits).await;
    }
    opened
}

async fn try_open(
    ports: &Ports,
    chat: &ChatSetup,
    submission: &Submission,
    claim: &Claim,
    deadline: &Interrupt,
) -> Result<Opened, Refusal> {
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
    let history_from_memory = !loaded.is_empty();
    let history = if history_from_memory {
        loaded
    } else {
        chat.initial_messages.clone()
    };
    let history_len = history.len();
    let mut controller = ChatController::new(chat.config.clone(), history);
    let ids = ports.ids.as_ref();
    let first = controller
        .send(&submission.input, ports.clock.now_ms(), &mut |p: &str| {
            ids.next_id(p)
        })
        .map_err(|_| BoundaryError::InvalidEvent)?;
    Ok(Opened {
        controller,
        first,
        history_len,
        history_from_memory,
    })
}
