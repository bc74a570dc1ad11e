//! MessagePack form of cty values (tfplugin5 `DynamicValue.msgpack`).
//!
//! Wire rules (go-cty `msgpack` package, Terraform's `docs/plugin-protocol/object-wire-format.md`):
//! * null is msgpack nil; an unknown value is any msgpack extension (cty writes ext type 0,
//!   refined unknowns ext type 12 with a map payload we ignore);
//! * numbers are ints, floats, or decimal strings when neither is exact;
//! * lists, sets and tuples are arrays; maps and objects are maps with string keys; objects carry
//!   every attribute of their type;
//! * a `dynamic` value is a 2-array `[JSON type constraint, value]`.
//!
//! The decoder is hand-rolled over [`rmp::Marker`] so that lengths read from the input never drive
//! an allocation larger than the input itself, and recursion depth is bounded by the type's depth.

use std::collections::BTreeMap;

use rmp::Marker;

use super::{Error, Number, Type, Value, child_path};

/// Decodes `bytes` as a value of type `ty`.
///
/// # Errors
/// Any [`Error`] for truncated input, trailing bytes, type mismatches, unsupported object
/// attributes, invalid numbers or non-UTF-8 strings.
pub fn decode(bytes: &[u8], ty: &Type) -> Result<Value, Error> {
    let mut reader = Reader { bytes, pos: 0 };
    let value = reader.value(ty, ".")?;
    match bytes.len() - reader.pos {
        0 => Ok(value),
        rest => Err(Error::TrailingBytes(rest)),
    }
}

/// Encodes `value` as type `ty`.
///
/// # Errors
/// [`Error::TypeMismatch`] when the value does not conform to the type,
/// [`Error::UnsupportedAttribute`] for object attributes the type lacks.
pub fn encode(value: &Value, ty: &Type) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    write_value(&mut out, value, ty, ".")?;
    Ok(out)
}

/// A cursor over the input.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

/// Category names for error messages.
fn marker_name(marker: Marker) -> &'static str {
    match marker {
        Marker::Null => "null",
        Marker::True | Marker::False => "bool",
        Marker::FixPos(_)
        | Marker::FixNeg(_)
        | Marker::U8
        | Marker::U16
        | Marker::U32
        | Marker::U64
        | Marker::I8
        | Marker::I16
        | Marker::I32
        | Marker::I64 => "integer",
        Marker::F32 | Marker::F64 => "float",
        Marker::FixStr(_) | Marker::Str8 | Marker::Str16 | Marker::Str32 => "string",
        Marker::Bin8 | Marker::Bin16 | Marker::Bin32 => "binary",
        Marker::FixArray(_) | Marker::Array16 | Marker::Array32 => "array",
        Marker::FixMap(_) | Marker::Map16 | Marker::Map32 => "map",
        Marker::Reserved => "reserved marker 0xc1",
        _ => "extension",
    }
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], Error> {
        let end = self.pos.checked_add(n).ok_or(Error::UnexpectedEof)?;
        let slice = self.bytes.get(self.pos..end).ok_or(Error::UnexpectedEof)?;
        self.pos = end;
        Ok(slice)
    }

    fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }

    fn be<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let mut buf = [0u8; N];
        buf.copy_from_slice(self.take(N)?);
        Ok(buf)
    }

    fn len8(&mut self) -> Result<usize, Error> {
        Ok(usize::from(self.u8()?))
    }

    fn len16(&mut self) -> Result<usize, Error> {
        Ok(usize::from(u16::from_be_bytes(self.be()?)))
    }

    fn len32(&mut self) -> Result<usize, Error> {
        usize::try_from(u32::from_be_bytes(self.be()?)).map_err(|_| Error::UnexpectedEof)
    }

    fn peek_marker(&self) -> Result<Marker, Error> {
        self.bytes
            .get(self.pos)
            .map(|b| Marker::from_u8(*b))
            .ok_or(Error::UnexpectedEof)
    }

    /// Skips an extension value (any ext = unknown). Called with the marker already consumed.
    fn skip_ext(&mut self, marker: Marker) -> Result<(), Error> {
        let len = match marker {
            Marker::FixExt1 => 1,
            Marker::FixExt2 => 2,
            Marker::FixExt4 => 4,
            Marker::FixExt8 => 8,
            Marker::FixExt16 => 16,
            Marker::Ext8 => self.len8()?,
            Marker::Ext16 => self.len16()?,
            Marker::Ext32 => self.len32()?,
            _ => return Err(Error::UnexpectedEof),
        };
        // One type byte, then the payload.
        self.take(1 + len)?;
        Ok(())
    }

    fn mismatch(path: &str, expected: &Type, marker: Marker) -> Error {
        Error::TypeMismatch {
            path: path.to_string(),
            expected: expected.friendly_name(),
            found: marker_name(marker).to_string(),
        }
    }

    /// Reads a string payload after its marker.
    fn str_body(&mut self, marker: Marker, path: &str) -> Result<String, Error> {
        let len = match marker {
            Marker::FixStr(n) => usize::from(n),
            Marker::Str8 | Marker::Bin8 => self.len8()?,
            Marker::Str16 | Marker::Bin16 => self.len16()?,
            Marker::Str32 | Marker::Bin32 => self.len32()?,
            _ => return Err(Error::UnexpectedEof),
        };
        let raw = self.take(len)?;
        String::from_utf8(raw.to_vec()).map_err(|_| Error::InvalidUtf8(path.to_string()))
    }

    /// Reads a string (map keys, type constraints).
    fn string(&mut self, path: &str) -> Result<String, Error> {
        let marker = Marker::from_u8(self.u8()?);
        match marker {
            Marker::FixStr(_) | Marker::Str8 | Marker::Str16 | Marker::Str32 => {
                self.str_body(marker, path)
            }
            other => Err(Self::mismatch(path, &Type::String, other)),
        }
    }

    fn array_len(&mut self, marker: Marker) -> Result<Option<usize>, Error> {
        Ok(match marker {
            Marker::FixArray(n) => Some(usize::from(n)),
            Marker::Array16 => Some(self.len16()?),
            Marker::Array32 => Some(self.len32()?),
            _ => None,
        })
    }

    fn map_len(&mut self, marker: Marker) -> Result<Option<usize>, Error> {
        Ok(match marker {
            Marker::FixMap(n) => Some(usize::from(n)),
            Marker::Map16 => Some(self.len16()?),
            Marker::Map32 => Some(self.len32()?),
            _ => None,
        })
    }

    /// Capacity for `n` elements, never more than the bytes left (each element takes >= 1 byte).
    fn capacity(&self, n: usize) -> usize {
        n.min(self.bytes.len() - self.pos)
    }

    fn number(&mut self, marker: Marker, path: &str) -> Result<Number, Error> {
        let invalid = |text: String| Error::InvalidNumber {
            path: path.to_string(),
            text,
        };
        Ok(match marker {
            Marker::FixPos(n) => Number::from(u64::from(n)),
            Marker::FixNeg(n) => Number::from(i64::from(n)),
            Marker::U8 => Number::from(u64::from(self.u8()?)),
            Marker::U16 => Number::from(u64::from(u16::from_be_bytes(self.be()?))),
            Marker::U32 => Number::from(u64::from(u32::from_be_bytes(self.be()?))),
            Marker::U64 => Number::from(u64::from_be_bytes(self.be()?)),
            Marker::I8 => Number::from(i64::from(i8::from_be_bytes(self.be()?))),
            Marker::I16 => Number::from(i64::from(i16::from_be_bytes(self.be()?))),
            Marker::I32 => Number::from(i64::from(i32::from_be_bytes(self.be()?))),
            Marker::I64 => Number::from(i64::from_be_bytes(self.be()?)),
            Marker::F32 => {
                let f = f64::from(f32::from_be_bytes(self.be()?));
                Number::from_f64(f).ok_or_else(|| invalid(f.to_string()))?
            }
            Marker::F64 => {
                let f = f64::from_be_bytes(self.be()?);
                Number::from_f64(f).ok_or_else(|| invalid(f.to_string()))?
            }
            Marker::FixStr(_) | Marker::Str8 | Marker::Str16 | Marker::Str32 => {
                let text = self.str_body(marker, path)?;
                Number::parse(&text).ok_or_else(|| invalid(text))?
            }
            other => return Err(Self::mismatch(path, &Type::Number, other)),
        })
    }

    fn value(&mut self, ty: &Type, path: &str) -> Result<Value, Error> {
        let marker = Marker::from_u8(self.u8()?);
        match marker {
            Marker::Null => return Ok(Value::Null),
            Marker::FixExt1
            | Marker::FixExt2
            | Marker::FixExt4
            | Marker::FixExt8
            | Marker::FixExt16
            | Marker::Ext8
            | Marker::Ext16
            | Marker::Ext32 => {
                self.skip_ext(marker)?;
                return Ok(Value::Unknown);
            }
            _ => {}
        }
        match ty {
            Type::Bool => match marker {
                Marker::True => Ok(Value::Bool(true)),
                Marker::False => Ok(Value::Bool(false)),
                other => Err(Self::mismatch(path, ty, other)),
            },
            Type::Number => Ok(Value::Number(self.number(marker, path)?)),
            Type::String => match marker {
                Marker::FixStr(_) | Marker::Str8 | Marker::Str16 | Marker::Str32 => {
                    Ok(Value::String(self.str_body(marker, path)?))
                }
                other => Err(Self::mismatch(path, ty, other)),
            },
            Type::List(elem) => Ok(Value::List(self.sequence(marker, ty, elem, path)?)),
            Type::Set(elem) => Ok(Value::Set(self.sequence(marker, ty, elem, path)?)),
            Type::Tuple(elems) => self.tuple(marker, ty, elems, path),
            Type::Map(elem) => self.map(marker, ty, elem, path),
            Type::Object(attrs) => self.object(marker, ty, attrs, path),
            Type::Dynamic => self.dynamic(marker, path),
        }
    }

    /// The elements of a list or set of `elem`.
    fn sequence(
        &mut self,
        marker: Marker,
        ty: &Type,
        elem: &Type,
        path: &str,
    ) -> Result<Vec<Value>, Error> {
        let n = self
            .array_len(marker)?
            .ok_or_else(|| Self::mismatch(path, ty, marker))?;
        let mut items = Vec::with_capacity(self.capacity(n));
        for i in 0..n {
            items.push(self.value(elem, &child_path(path, &format!("[{i}]")))?);
        }
        Ok(items)
    }

    fn tuple(
        &mut self,
        marker: Marker,
        ty: &Type,
        elems: &[Type],
        path: &str,
    ) -> Result<Value, Error> {
        let n = self
            .array_len(marker)?
            .ok_or_else(|| Self::mismatch(path, ty, marker))?;
        if n != elems.len() {
            return Err(Error::TypeMismatch {
                path: path.to_string(),
                expected: format!("tuple of {} elements", elems.len()),
                found: format!("{n} elements"),
            });
        }
        let mut items = Vec::with_capacity(n);
        for (i, elem) in elems.iter().enumerate() {
            items.push(self.value(elem, &child_path(path, &format!("[{i}]")))?);
        }
        Ok(Value::Tuple(items))
    }

    fn map(&mut self, marker: Marker, ty: &Type, elem: &Type, path: &str) -> Result<Value, Error> {
        let n = self
            .map_len(marker)?
            .ok_or_else(|| Self::mismatch(path, ty, marker))?;
        let mut entries = BTreeMap::new();
        for _ in 0..n {
            let key = self.string(path)?;
            let child = child_path(path, &format!("[{key:?}]"));
            let value = self.value(elem, &child)?;
            entries.insert(key, value);
        }
        Ok(Value::Map(entries))
    }

    fn object(
        &mut self,
        marker: Marker,
        ty: &Type,
        attrs: &BTreeMap<String, Type>,
        path: &str,
    ) -> Result<Value, Error> {
        let n = self
            .map_len(marker)?
            .ok_or_else(|| Self::mismatch(path, ty, marker))?;
        let mut entries = BTreeMap::new();
        for _ in 0..n {
            let key = self.string(path)?;
            let Some(attr_ty) = attrs.get(&key) else {
                return Err(Error::UnsupportedAttribute {
                    path: path.to_string(),
                    name: key,
                });
            };
            let value = self.value(attr_ty, &child_path(path, &key))?;
            entries.insert(key, value);
        }
        // Tolerate senders that omit attributes: absent means null.
        for name in attrs.keys() {
            entries.entry(name.clone()).or_insert(Value::Null);
        }
        Ok(Value::Object(entries))
    }

    /// A dynamic value: `[type JSON, value]`.
    fn dynamic(&mut self, marker: Marker, path: &str) -> Result<Value, Error> {
        if self.array_len(marker)? != Some(2) {
            return Err(Self::mismatch(path, &Type::Dynamic, marker));
        }
        let type_marker = Marker::from_u8(self.u8()?);
        let type_json = match type_marker {
            Marker::FixStr(_)
            | Marker::Str8
            | Marker::Str16
            | Marker::Str32
            | Marker::Bin8
            | Marker::Bin16
            | Marker::Bin32 => self.str_body(type_marker, path)?,
            other => return Err(Self::mismatch(path, &Type::String, other)),
        };
        let inner = Type::from_json_bytes(type_json.as_bytes())?;
        if inner == Type::Dynamic {
            return Err(Error::InvalidType("dynamic inside dynamic".into()));
        }
        // Check there is something left before recursing (cheap guard for fuzzed input).
        self.peek_marker()?;
        self.value(&inner, path)
    }
}

fn write_err<E: std::fmt::Debug>(err: E) -> Error {
    Error::Write(format!("{err:?}"))
}

fn len_u32(len: usize, path: &str) -> Result<u32, Error> {
    u32::try_from(len).map_err(|_| Error::TypeMismatch {
        path: path.to_string(),
        expected: "at most 2^32-1 elements".into(),
        found: format!("{len}"),
    })
}

fn write_number(out: &mut Vec<u8>, number: &Number) -> Result<(), Error> {
    if let Some(i) = number.as_i64() {
        rmp::encode::write_sint(out, i).map_err(write_err)?;
    } else if let Some(u) = number.as_u64() {
        rmp::encode::write_uint(out, u).map_err(write_err)?;
    } else if let Some(f) = number.as_exact_f64() {
        rmp::encode::write_f64(out, f).map_err(write_err)?;
    } else {
        rmp::encode::write_str(out, number.as_str()).map_err(write_err)?;
    }
    Ok(())
}

/// Infers the type of a value for encoding under `dynamic`.
fn infer_type(value: &Value) -> Type {
    let first_type = |items: &[Value]| items.first().map_or(Type::Dynamic, infer_type);
    match value {
        Value::Unknown | Value::Null => Type::Dynamic,
        Value::Bool(_) => Type::Bool,
        Value::Number(_) => Type::Number,
        Value::String(_) => Type::String,
        Value::List(items) => Type::list(first_type(items)),
        Value::Set(items) => Type::set(first_type(items)),
        Value::Tuple(items) => Type::Tuple(items.iter().map(infer_type).collect()),
        Value::Map(entries) => Type::map(entries.values().next().map_or(Type::Dynamic, infer_type)),
        Value::Object(attrs) => Type::Object(
            attrs
                .iter()
                .map(|(k, v)| (k.clone(), infer_type(v)))
                .collect(),
        ),
    }
}

fn write_value(out: &mut Vec<u8>, value: &Value, ty: &Type, path: &str) -> Result<(), Error> {
    let mismatch = || Error::TypeMismatch {
        path: path.to_string(),
        expected: ty.friendly_name(),
        found: format!("{value:?}"),
    };
    match (value, ty) {
        (Value::Unknown, _) => {
            // cty's unknown: fixext1, type 0, one zero byte.
            rmp::encode::write_ext_meta(out, 1, 0).map_err(write_err)?;
            out.push(0);
        }
        (Value::Null, _) => rmp::encode::write_nil(out).map_err(write_err)?,
        (_, Type::Dynamic) => {
            let inner = infer_type(value);
            rmp::encode::write_array_len(out, 2).map_err(write_err)?;
            rmp::encode::write_str(out, &inner.to_json().to_string()).map_err(write_err)?;
            write_value(out, value, &inner, path)?;
        }
        (Value::Bool(b), Type::Bool) => rmp::encode::write_bool(out, *b).map_err(write_err)?,
        (Value::Number(n), Type::Number) => write_number(out, n)?,
        (Value::String(s), Type::String) => rmp::encode::write_str(out, s).map_err(write_err)?,
        (Value::List(items), Type::List(elem)) | (Value::Set(items), Type::Set(elem)) => {
            rmp::encode::write_array_len(out, len_u32(items.len(), path)?).map_err(write_err)?;
            for (i, item) in items.iter().enumerate() {
                write_value(out, item, elem, &child_path(path, &format!("[{i}]")))?;
            }
        }
        (Value::Tuple(items), Type::Tuple(elems)) if items.len() == elems.len() => {
            rmp::encode::write_array_len(out, len_u32(items.len(), path)?).map_err(write_err)?;
            for (i, (item, elem)) in items.iter().zip(elems).enumerate() {
                write_value(out, item, elem, &child_path(path, &format!("[{i}]")))?;
            }
        }
        (Value::Map(entries), Type::Map(elem)) => {
            rmp::encode::write_map_len(out, len_u32(entries.len(), path)?).map_err(write_err)?;
            for (key, item) in entries {
                rmp::encode::write_str(out, key).map_err(write_err)?;
                write_value(out, item, elem, &child_path(path, &format!("[{key:?}]")))?;
            }
        }
        (Value::Object(attrs), Type::Object(attr_types)) => {
            if let Some(extra) = attrs.keys().find(|k| !attr_types.contains_key(*k)) {
                return Err(Error::UnsupportedAttribute {
                    path: path.to_string(),
                    name: extra.clone(),
                });
            }
            // Every attribute of the type is written (absent ones as null), sorted by name.
            rmp::encode::write_map_len(out, len_u32(attr_types.len(), path)?).map_err(write_err)?;
            for (name, attr_ty) in attr_types {
                rmp::encode::write_str(out, name).map_err(write_err)?;
                let item = attrs.get(name).unwrap_or(&Value::Null);
                write_value(out, item, attr_ty, &child_path(path, name))?;
            }
        }
        _ => return Err(mismatch()),
    }
    Ok(())
}

#[cfg(test)]
mod tests;
