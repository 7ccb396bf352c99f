//! A chat definition's conversation statechart, as far as a session needs it: the states, the
//! transitions (`state --event--> target`) and the deterministic routes (`id`, the `event` it
//! fires, the states it may fire in). The route's matcher and response are the host's code and
//! stay with the host; what is checked here is whether a stored `conversation` (its decisions
//! and final state) could have been produced by this chart (AgentsKit's resume rule for a stored conversation).
//!
//! Replay: from the chart's initial state, each decision must start where the previous one
//! ended, name a route of the chart allowed in that state, and end where that route's event
//! leads; the last state reached must be the stored `state`. A session stored before the chart
//! existed (no `conversation`) starts at the initial state, as AgentsKit does.

use std::collections::BTreeMap;

use crate::hash::FixedHashSet;

use serde_json::Value;

use super::envelope::Conversation;
use crate::checks::{is_safe_id, utf16_len};
use crate::limits::{
    CONVERSATION_EVENTS_PER_STATE_MAX, CONVERSATION_EVENT_CHARS_MAX, CONVERSATION_ROUTES_MAX,
    CONVERSATION_STATES_MAX, CONVERSATION_STATE_CHARS_MAX,
};

/// The statechart of a chat definition's conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversationChart {
    pub initial: String,
    /// State name → its transitions (event → target state).
    pub states: BTreeMap<String, BTreeMap<String, String>>,
    pub routes: Vec<ChartRoute>,
}

/// A deterministic route: the event it fires, and the states it may fire in (`None`: any).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChartRoute {
    pub id: String,
    pub event: String,
    pub states: Option<Vec<String>>,
}

impl ConversationChart {
    /// A chart of one state and no transitions: it accepts only a conversation with no decisions.
    pub fn single_state(state: &str) -> Self {
        Self {
            initial: state.to_owned(),
            states: BTreeMap::from([(state.to_owned(), BTreeMap::new())]),
            routes: Vec::new(),
        }
    }

    /// Reads a chart as a definition gives it (AgentsKit's `ConversationDefinition` as JSON:
    /// `{ initial, states: { name: { on?: { event: target }, actions? } }, routes: [{ id, event,
    /// states? }] }`; a route's `match` and `response` are the host's functions and have no JSON
    /// form) and checks it. `Err` names the field.
    pub fn from_json(value: &Value) -> Result<Self, String> {
        let text = |v: &Value, what: &str| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("{what} must be a string"))
        };
        let initial = text(&value["initial"], "initial")?;
        let states_json = value["states"]
            .as_object()
            .ok_or("states must be an object of states")?;
        let mut states = BTreeMap::new();
        for (name, state) in states_json {
            let mut on = BTreeMap::new();
            match &state["on"] {
                Value::Null => {}
                Value::Object(events) => {
                    for (event, target) in events {
                        let what = format!("states.{name}.on.{event}");
                        on.insert(event.clone(), text(target, &what)?);
                    }
                }
                _ => return Err(format!("states.{name}.on must be an object")),
            }
            states.insert(name.clone(), on);
        }
        let routes_json: &[Value] = match &value["routes"] {
            Value::Null => &[],
            Value::Array(items) => items,
            _ => return Err("routes must be an array".into()),
        };
        let mut routes = Vec::with_capacity(routes_json.len());
        for (i, route) in routes_json.iter().enumerate() {
            let states = match &route["states"] {
                Value::Null => None,
                Value::Array(list) => Some(
                    list.iter()
                        .map(|s| text(s, &format!("routes[{i}].states[]")))
                        .collect::<Result<Vec<_>, _>>()?,
                ),
                _ => return Err(format!("routes[{i}].states must be an array")),
            };
            routes.push(ChartRoute {
                id: text(&route["id"], &format!("routes[{i}].id"))?,
                event: text(&route["event"], &format!("routes[{i}].event"))?,
                states,
            });
        }
        let chart = Self {
            initial,
            states,
            routes,
        };
        chart.check()?;
        Ok(chart)
    }

    /// Checks the chart itself (definition time): names within limits, every target and route
    /// state known, route ids unique SafeIds. `Err` names what is wrong.
    pub fn check(&self) -> Result<(), String> {
        if self.states.len() > CONVERSATION_STATES_MAX {
            return Err(format!(
                "at most {CONVERSATION_STATES_MAX} conversation states are allowed"
            ));
        }
        if self.routes.len() > CONVERSATION_ROUTES_MAX {
            return Err(format!(
                "at most {CONVERSATION_ROUTES_MAX} conversation routes are allowed"
            ));
        }
        if !self.states.contains_key(&self.initial) {
            return Err(format!(
                "initial state {:?} is not one of the states",
                self.initial
            ));
        }
        for (state, on) in &self.states {
            check_name(state, "state", CONVERSATION_STATE_CHARS_MAX)?;
            if on.len() > CONVERSATION_EVENTS_PER_STATE_MAX {
                return Err(format!(
                    "state {state:?} has more than {CONVERSATION_EVENTS_PER_STATE_MAX} transitions"
                ));
            }
            for (event, target) in on {
                check_name(event, "event", CONVERSATION_EVENT_CHARS_MAX)?;
                if !self.states.contains_key(target) {
                    return Err(format!(
                        "state {state:?} goes to {target:?} on {event:?}, which is not a state"
                    ));
                }
            }
        }
        let mut ids = FixedHashSet::default();
        for route in &self.routes {
            if !is_safe_id(&route.id) {
                return Err(format!("route id {:?} is not a SafeId", route.id));
            }
            if !ids.insert(route.id.as_str()) {
                return Err(format!("route id {:?} is used twice", route.id));
            }
            check_name(&route.event, "route event", CONVERSATION_EVENT_CHARS_MAX)?;
            for state in route.states.iter().flatten() {
                if !self.states.contains_key(state) {
                    return Err(format!(
                        "route {:?} names state {state:?}, which is not a state",
                        route.id
                    ));
                }
            }
        }
        Ok(())
    }

    /// Replays `stored` through the chart (see the module doc). `Err` says which decision (or
    /// the final state) the chart does not accept.
    pub fn replay(&self, stored: &Conversation) -> Result<(), String> {
        let mut state = self.initial.as_str();
        for (i, decision) in stored.decisions.iter().enumerate() {
            let at = format!("conversation.decisions[{i}]");
            if decision.from_state != state {
                return Err(format!(
                    "{at} starts in {:?}, but the chart is in {state:?}",
                    decision.from_state
                ));
            }
            let route = self
                .routes
                .iter()
                .find(|r| r.id == decision.route_id)
                .ok_or_else(|| {
                    format!(
                        "{at} names route {:?}, which the chart lacks",
                        decision.route_id
                    )
                })?;
            if route
                .states
                .as_ref()
                .is_some_and(|allowed| !allowed.iter().any(|s| s == state))
            {
                return Err(format!(
                    "{at}: route {:?} may not fire in {state:?}",
                    route.id
                ));
            }
            let target = self
                .states
                .get(state)
                .and_then(|on| on.get(&route.event))
                .ok_or_else(|| format!("{at}: {state:?} has no transition on {:?}", route.event))?;
            if *target != decision.to_state {
                return Err(format!(
                    "{at} ends in {:?}, but {:?} leads to {target:?}",
                    decision.to_state, route.event
                ));
            }
            state = target;
        }
        if stored.state != state {
            return Err(format!(
                "conversation.state is {:?}, but its decisions end in {state:?}",
                stored.state
            ));
        }
        Ok(())
    }

    /// The conversation of a session that starts now.
    pub fn start(&self) -> Conversation {
        Conversation {
            state: self.initial.clone(),
            decisions: Vec::new(),
        }
    }
}

fn check_name(name: &str, what: &str, units_max: usize) -> Result<(), String> {
    let units = utf16_len(name);
    if units == 0 || units > units_max {
        return Err(format!(
            "{what} name {name:?} must be 1 to {units_max} characters"
        ));
    }
    Ok(())
}
