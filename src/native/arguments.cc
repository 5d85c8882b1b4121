#include "arguments.h"

#include <cmath>
#include <cstdio>

namespace arenacache {

namespace {

constexpr size_t kShownUnits = 40;  // as lib/errors.js's describe(): longer strings are cut, with "…"

const char* TypedArrayName(napi_typedarray_type type) {
  switch (type) {
    case napi_int8_array: return "Int8Array";
    case napi_uint8_array: return "Uint8Array";
    case napi_uint8_clamped_array: return "Uint8ClampedArray";
    case napi_int16_array: return "Int16Array";
    case napi_uint16_array: return "Uint16Array";
    case napi_int32_array: return "Int32Array";
    case napi_uint32_array: return "Uint32Array";
    case napi_float32_array: return "Float32Array";
    case napi_float64_array: return "Float64Array";
    case napi_bigint64_array: return "BigInt64Array";
    case napi_biguint64_array: return "BigUint64Array";
    default: return "TypedArray";
  }
}

// "a Uint8Array", "an Int32Array".
std::string WithArticle(const std::string& name) { return (name[0] == 'I' ? "an " : "a ") + name; }

// JSON.stringify's quoting of UTF-16 code units (lone surrogates escaped,
// as well-formed JSON.stringify does), kept in UTF-16; "…" before the
// closing quote when the string was `cut`.
std::u16string Quote(const std::u16string& units, bool cut) {
  std::u16string quoted = u"\"";
  for (size_t i = 0; i < units.size(); i++) {
    const char16_t unit = units[i];
    const bool high = unit >= 0xd800 && unit <= 0xdbff;
    const bool low = unit >= 0xdc00 && unit <= 0xdfff;
    if (high && i + 1 < units.size() && units[i + 1] >= 0xdc00 && units[i + 1] <= 0xdfff) {
      quoted += unit;
      quoted += units[++i];
      continue;
    }
    char escape[8] = {0};
    switch (unit) {
      case u'"': quoted += u"\\\""; continue;
      case u'\\': quoted += u"\\\\"; continue;
      case u'\b': quoted += u"\\b"; continue;
      case u'\f': quoted += u"\\f"; continue;
      case u'\n': quoted += u"\\n"; continue;
      case u'\r': quoted += u"\\r"; continue;
      case u'\t': quoted += u"\\t"; continue;
      default: break;
    }
    if (unit < 0x20 || high || low) {
      std::snprintf(escape, sizeof(escape), "\\u%04x", static_cast<unsigned>(unit));
      for (const char* c = escape; *c != '\0'; c++) quoted += static_cast<char16_t>(*c);
    } else {
      quoted += unit;
    }
  }
  if (cut) quoted += u'\u2026';
  quoted += u'"';
  return quoted;
}

}  // namespace

bool IsSafeInteger(double value) {
  return std::trunc(value) == value && std::fabs(value) <= static_cast<double>(kMaxSafeInteger);
}

Arguments::Arguments(const Napi::CallbackInfo& info, const char* signature)
    : env_(info.Env()), info_(info), signature_(signature) {
  function_ = signature_.substr(0, signature_.find('('));
}

Arguments::Value Arguments::At(size_t index, const char* name) const { return Value{info_[index], index, name}; }

napi_valuetype Arguments::TypeOf(napi_value value) const {
  napi_valuetype type = napi_undefined;
  if (napi_typeof(env_, value, &type) != napi_ok) return napi_undefined;
  return type;
}

bool Arguments::Count(size_t min, size_t max) {
  const size_t count = info_.Length();
  if (count >= min && count <= max) return true;
  std::string expected;
  if (max == 0) expected = "no arguments";
  else if (min == max) expected = std::to_string(min) + (min == 1 ? " argument" : " arguments");
  else if (max == min + 1) expected = std::to_string(min) + " or " + std::to_string(max) + " arguments";
  else expected = std::to_string(min) + " to " + std::to_string(max) + " arguments";
  const std::string message = signature_ + ": expected " + expected + " (got " + std::to_string(count) + ")";
  napi_throw_type_error(env_, nullptr, message.c_str());
  return false;
}

std::string Arguments::Describe(napi_value value) const {
  switch (TypeOf(value)) {
    case napi_undefined: return "undefined";
    case napi_null: return "null";
    case napi_boolean: {
      bool flag = false;
      napi_get_value_bool(env_, value, &flag);
      return flag ? "true" : "false";
    }
    case napi_number:
    case napi_bigint: {
      // ToString of a number or BigInt runs no JavaScript, and words it as
      // JavaScript does (NaN, 1e+21, -1.5).
      napi_value text = nullptr;
      if (napi_coerce_to_string(env_, value, &text) != napi_ok) return "a number";
      std::string shown = Napi::String(env_, text).Utf8Value();
      if (TypeOf(value) == napi_bigint) shown += "n";
      return shown;
    }
    case napi_string: {
      size_t length = 0;
      napi_get_value_string_utf16(env_, value, nullptr, 0, &length);
      std::u16string units(length, u'\0');
      napi_get_value_string_utf16(env_, value, &units[0], length + 1, &length);
      const bool cut = units.size() > kShownUnits;
      if (cut) units.resize(kShownUnits);
      const std::u16string quoted = Quote(units, cut);
      napi_value text = nullptr;
      if (napi_create_string_utf16(env_, quoted.data(), quoted.size(), &text) != napi_ok) return "a string";
      return Napi::String(env_, text).Utf8Value();
    }
    case napi_symbol: return "a symbol";
    case napi_function: return "a function";
    default: break;
  }
  bool is = false;
  if (napi_is_array(env_, value, &is) == napi_ok && is) {
    uint32_t length = 0;
    napi_get_array_length(env_, value, &length);
    return "an array of length " + std::to_string(length);
  }
  if (napi_is_typedarray(env_, value, &is) == napi_ok && is) {
    napi_typedarray_type type = napi_uint8_array;
    size_t length = 0;
    napi_get_typedarray_info(env_, value, &type, &length, nullptr, nullptr, nullptr);
    return WithArticle(TypedArrayName(type)) + " of length " + std::to_string(length);
  }
  if (napi_is_dataview(env_, value, &is) == napi_ok && is) return "a DataView";
  if (napi_is_arraybuffer(env_, value, &is) == napi_ok && is) return "an ArrayBuffer";
  return "an object";
}

bool Arguments::Fail(bool range, size_t index, const std::string& name, const std::string& what, napi_value got) {
  const std::string message = function_ + ": argument " + std::to_string(index + 1) + " (" + name + ") must be " +
                              what + " (got " + Describe(got) + ")";
  if (range) napi_throw_range_error(env_, nullptr, message.c_str());
  else napi_throw_type_error(env_, nullptr, message.c_str());
  return false;
}

bool Arguments::FailNumber(bool range, size_t index, const std::string& name, const std::string& what, double got) {
  napi_value value = nullptr;
  napi_create_double(env_, got, &value);
  return Fail(range, index, name, what, value);
}

bool Arguments::FailString(bool range, size_t index, const std::string& name, const std::string& what,
                           const std::string& got) {
  napi_value value = nullptr;
  napi_create_string_utf8(env_, got.data(), got.size(), &value);
  return Fail(range, index, name, what, value);
}

bool Arguments::String(const Value& v, std::string* out) {
  if (TypeOf(v.value) != napi_string) return Fail(false, v, "a string");
  *out = Napi::String(env_, v.value).Utf8Value();
  return true;
}

bool Arguments::Path(const Value& v, std::string* out) {
  static const char* const what = "a non-empty string without NUL bytes";
  if (TypeOf(v.value) != napi_string) return Fail(false, v, what);
  *out = Napi::String(env_, v.value).Utf8Value();
  if (out->empty() || out->find('\0') != std::string::npos) return Fail(true, v, what);
  return true;
}

bool Arguments::Text(const Value& v, std::string* out, const char* what) {
  if (TypeOf(v.value) != napi_string) return Fail(false, v, what);
  *out = Napi::String(env_, v.value).Utf8Value();
  if (out->find('\0') != std::string::npos) return Fail(true, v, what);
  return true;
}

bool Arguments::Integer(const Value& v, int64_t min, int64_t max, int64_t* out, const char* what) {
  const std::string wanted =
      what != nullptr ? std::string(what) : "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (TypeOf(v.value) != napi_number) return Fail(false, v, wanted);
  double number = 0;
  napi_get_value_double(env_, v.value, &number);
  // NaN fails every comparison; the bounds are exact as doubles (|n| <= 2^53).
  if (!(number >= static_cast<double>(min) && number <= static_cast<double>(max)) || std::trunc(number) != number) {
    return Fail(true, v, wanted);
  }
  *out = static_cast<int64_t>(number);
  return true;
}

bool Arguments::Number(const Value& v, const char* what, double* out) {
  if (TypeOf(v.value) != napi_number) return Fail(false, v, what);
  napi_get_value_double(env_, v.value, out);
  return true;
}

bool Arguments::Boolean(const Value& v, bool* out) {
  if (TypeOf(v.value) != napi_boolean) return Fail(false, v, "a boolean");
  napi_get_value_bool(env_, v.value, out);
  return true;
}

bool Arguments::Function(const Value& v, bool optional, bool* present) {
  const napi_valuetype type = TypeOf(v.value);
  *present = type == napi_function;
  if (*present || (optional && type == napi_undefined)) return true;
  return Fail(false, v, optional ? "a function or undefined" : "a function");
}

bool Arguments::Object(const Value& v, const char* what) {
  if (TypeOf(v.value) != napi_object) return Fail(false, v, what);
  return true;
}

bool Arguments::Array(const Value& v, const char* what, uint32_t* length) {
  bool is = false;
  if (napi_is_array(env_, v.value, &is) != napi_ok || !is) return Fail(false, v, what);
  // A Proxy is not an Array to napi_is_array: this reads a real length.
  napi_get_array_length(env_, v.value, length);
  return true;
}

bool Arguments::TypedArray(const Value& v, napi_typedarray_type type, int64_t length, const std::string& what,
                           void** data, size_t* elements) {
  bool is = false;
  napi_typedarray_type actual = napi_uint8_array;
  if (napi_is_typedarray(env_, v.value, &is) != napi_ok || !is) return Fail(false, v, what);
  // A detached buffer reads as length 0 and no data.
  if (napi_get_typedarray_info(env_, v.value, &actual, elements, data, nullptr, nullptr) != napi_ok || actual != type) {
    return Fail(false, v, what);
  }
  if (length >= 0 && *elements != static_cast<size_t>(length)) return Fail(true, v, what);
  return true;
}

bool Arguments::Get(const Value& v, const char* key, Value* out) {
  napi_value value = nullptr;
  if (napi_get_named_property(env_, v.value, key, &value) != napi_ok) return false;
  *out = Value{value, v.index, v.name + "." + key};
  return true;
}

bool Arguments::Strings(const Value& v, uint32_t length, const char* what, std::vector<std::string>* out) {
  out->resize(length);
  for (uint32_t i = 0; i < length; i++) {
    napi_value element = nullptr;
    // A getter may throw (its exception stays pending) or shrink the array
    // (the element reads as undefined, and is refused below).
    if (napi_get_element(env_, v.value, i, &element) != napi_ok) return false;
    if (TypeOf(element) != napi_string) {
      return Fail(false, v.index, v.name + "[" + std::to_string(i) + "]", what, element);
    }
    (*out)[i] = Napi::String(env_, element).Utf8Value();
  }
  return true;
}

}  // namespace arenacache
