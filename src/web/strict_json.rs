//! A JS value as JSON for the protocol exports, refusing what JSON cannot hold instead of
//! dropping or coercing it the way `JSON.stringify` does (a function field vanishes, `NaN`
//! becomes `null`, a `Date` becomes a string, `[undefined]` becomes `[null]`). An input that
//! only *looks* valid after such a coercion is not the input the caller sent, so it is refused:
//! the caller gets the protocol's "invalid" diagnostic, never a silently different value.
//!
//! Refused: functions, symbols, BigInt, `NaN` and `±Infinity`, strings with lone surrogates,
//! `undefined` as an array item or as the value itself, holes, objects that are not plain
//! (`Date`, `Map`, class instances; a plain object of another realm is fine), symbol keys,
//! accessor properties (never invoked: a getter is host code), cycles and nesting or size beyond
//! `JS_INPUT_DEPTH_MAX` / `JS_INPUT_NODES_MAX`. A property whose value is `undefined` is absent,
//! as in JSON and in the reference decoder. Proxies are read through `Reflect` only; anything
//! that throws is refused, and the thrown value is dropped (it may be hostile text).

use js_sys::{JsString, Object, Reflect};
use serde_json::{Map, Number, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::core::limits::{JS_INPUT_DEPTH_MAX, JS_INPUT_NODES_MAX};

#[wasm_bindgen]
extern "C" {
    /// `Array.isArray`, which throws for a revoked proxy: caught here.
    #[wasm_bindgen(catch, js_namespace = Array, js_name = isArray)]
    fn is_array(value: &JsValue) -> Result<bool, JsValue>;
}

/// The input is not a JSON value. Deliberately carries no detail: the callers answer with the
/// protocol's fixed "invalid" text, and nothing of the input may be echoed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotJson;

/// Converts `value` to JSON, or refuses it (see the module docs).
pub fn to_json_strict(value: &JsValue) -> Result<Value, NotJson> {
    Walk {
        nodes: 0,
        dates: false,
    }
    .value(value, 0)
}

/// [`to_json_strict`], except that a valid `Date` becomes its ISO string (what its `toJSON`
/// gives): AgentsKit's `Message.createdAt` is a `Date`. An invalid `Date` is refused.
pub fn to_json_strict_with_dates(value: &JsValue) -> Result<Value, NotJson> {
    Walk {
        nodes: 0,
        dates: true,
    }
    .value(value, 0)
}

struct Walk {
    nodes: usize,
    /// Whether `Date` objects are read as their ISO string.
    dates: bool,
}

impl Walk {
    fn value(&mut self, value: &JsValue, depth: usize) -> Result<Value, NotJson> {
        self.nodes += 1;
        if self.nodes > JS_INPUT_NODES_MAX || depth > JS_INPUT_DEPTH_MAX {
            return Err(NotJson); // also how a cycle ends
        }
        if value.is_null() {
            return Ok(Value::Null);
        }
        if let Some(b) = value.as_bool() {
            return Ok(Value::Bool(b));
        }
        if let Some(n) = value.as_f64() {
            return number(n);
        }
        if let Some(s) = value.dyn_ref::<JsString>() {
            return if s.is_valid_utf16() {
                Ok(Value::String(String::from(s)))
            } else {
                Err(NotJson)
            };
        }
        if !value.is_object() || value.is_function() {
            return Err(NotJson); // undefined, a function, a symbol, a BigInt
        }
        if let Some(date) = value.dyn_ref::<js_sys::Date>().filter(|_| self.dates) {
            if date.get_time().is_nan() {
                return Err(NotJson); // `toISOString` would throw
            }
            return Ok(Value::String(String::from(date.to_iso_string())));
        }
        if is_array(value).map_err(|_| NotJson)? {
            self.array(value, depth)
        } else {
            self.object(value, depth)
        }
    }

    fn array(&mut self, array: &JsValue, depth: usize) -> Result<Value, NotJson> {
        let length = own_data_value(array, &JsValue::from_str("length"))?
            .as_f64()
            .ok_or(NotJson)?;
        if length > JS_INPUT_NODES_MAX as f64 {
            return Err(NotJson);
        }
        let mut items = Vec::with_capacity(length as usize);
        for index in 0..length as u32 {
            let item = own_data_value(array, &JsValue::from(index))?;
            if item.is_undefined() {
                return Err(NotJson); // a hole or `undefined`: JSON.stringify would write null
            }
            items.push(self.value(&item, depth + 1)?);
        }
        Ok(Value::Array(items))
    }

    fn object(&mut self, object: &JsValue, depth: usize) -> Result<Value, NotJson> {
        if !is_plain(object)? {
            return Err(NotJson);
        }
        let keys = Reflect::own_keys(object).map_err(|_| NotJson)?;
        let mut map = Map::new();
        for key in keys.iter() {
            let descriptor = descriptor(object, &key)?;
            if !Reflect::get(&descriptor, &"enumerable".into())
                .map_err(|_| NotJson)?
                .is_truthy()
            {
                continue; // JSON sees own enumerable properties only
            }
            let Some(name) = key.dyn_ref::<JsString>() else {
                return Err(NotJson); // an enumerable symbol key
            };
            let item = data_value(&descriptor)?;
            if item.is_undefined() {
                continue; // absent, as in JSON
            }
            if !name.is_valid_utf16() {
                return Err(NotJson);
            }
            map.insert(String::from(name), self.value(&item, depth + 1)?);
        }
        Ok(Value::Object(map))
    }
}

/// A finite number; integers within the safe range stay integers (so they print as `1`, not `1.0`).
fn number(n: f64) -> Result<Value, NotJson> {
    if !n.is_finite() {
        return Err(NotJson);
    }
    if n.fract() == 0.0 && n.abs() <= crate::core::limits::INTEGER_SAFE_MAX as f64 {
        return Ok(Value::Number(Number::from(n as i64)));
    }
    Number::from_f64(n).map(Value::Number).ok_or(NotJson)
}

/// A plain object: its prototype is `null` or a root object (some realm's `Object.prototype`).
/// `Date`, `Map` and class instances have a prototype that itself has one.
fn is_plain(object: &JsValue) -> Result<bool, NotJson> {
    let proto = Reflect::get_prototype_of(object).map_err(|_| NotJson)?;
    if proto.is_null() {
        return Ok(true);
    }
    Ok(Reflect::get_prototype_of(&proto)
        .map_err(|_| NotJson)?
        .is_null())
}

fn descriptor(object: &JsValue, key: &JsValue) -> Result<JsValue, NotJson> {
    let object = object.unchecked_ref::<Object>();
    let descriptor = Reflect::get_own_property_descriptor(object, key).map_err(|_| NotJson)?;
    if descriptor.is_undefined() {
        return Err(NotJson); // a proxy that lists a key it does not have
    }
    Ok(descriptor)
}

/// The value of a data property; an accessor is refused without calling it.
fn data_value(descriptor: &JsValue) -> Result<JsValue, NotJson> {
    let has = |name: &str| Reflect::has(descriptor, &name.into()).map_err(|_| NotJson);
    if has("get")? || has("set")? {
        return Err(NotJson);
    }
    Reflect::get(descriptor, &"value".into()).map_err(|_| NotJson)
}

/// `object[key]` when `object` is an object and `key` an own data property of it; `None` for
/// anything else (an accessor is not run).
pub fn own_data_property(object: &JsValue, key: &str) -> Option<JsValue> {
    if !object.is_object() {
        return None;
    }
    own_data_value(object, &JsValue::from_str(key))
        .ok()
        .filter(|v| !v.is_undefined())
}

/// `object[key]` when `key` is an own data property (absent: `undefined`).
fn own_data_value(object: &JsValue, key: &JsValue) -> Result<JsValue, NotJson> {
    let object_ref = object.unchecked_ref::<Object>();
    let descriptor = Reflect::get_own_property_descriptor(object_ref, key).map_err(|_| NotJson)?;
    if descriptor.is_undefined() {
        return Ok(JsValue::UNDEFINED);
    }
    data_value(&descriptor)
}
