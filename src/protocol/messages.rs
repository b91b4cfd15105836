//! The JSON messages of backend protocol v1, one per line (`docs/backend-protocol.md`).
//!
//! Requests go from opconform to the backend on its stdin, replies come back on its stdout.
//! Every message is a JSON object whose `type` field names it. Tensor bytes travel as base64
//! (standard alphabet) of the little-endian buffer, `total_tensor_size_in_bytes` long.

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;
use opconform_backend::{BackendInfo, Level, OperatorDesc, OperatorKind, TensorDesc};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The protocol version this module speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// A message opconform writes to the backend's stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    /// `{"type":"hello","protocol":1}`: opens the session, offering a protocol version.
    Hello(HelloRequest),
    /// `{"type":"execute",...}`: one case to run.
    Execute(Box<ExecuteRequest>),
    /// `{"type":"shutdown"}`: the session is over; the backend exits.
    Shutdown,
}

/// The body of a `hello` request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelloRequest {
    /// The highest protocol version opconform speaks.
    pub protocol: u32,
}

/// The body of an `execute` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecuteRequest {
    /// Case id, unique and increasing within a run (not reset when the backend restarts).
    pub id: u64,
    /// The level the run certifies, e.g. `4_1` or `opset16`.
    pub level: Level,
    /// The descriptor, exactly as `opconform_backend::OperatorDesc` serialises.
    pub operator: OperatorDesc,
    /// Input tensors in descriptor order, with their bytes.
    pub inputs: Vec<TensorPayload>,
    /// Output tensors in descriptor order, with the bytes the buffers hold before the run
    /// (a poison pattern); bytes the backend does not write must come back unchanged.
    pub outputs: Vec<TensorPayload>,
}

impl ExecuteRequest {
    /// This request as one protocol line, `{"type":"execute",...}` (without the newline);
    /// the same text as serialising `Request::Execute` gives, without cloning the request.
    pub fn to_line(&self) -> serde_json::Result<String> {
        #[derive(Serialize)]
        struct Tagged<'a> {
            r#type: &'static str,
            #[serde(flatten)]
            body: &'a ExecuteRequest,
        }
        serde_json::to_string(&Tagged {
            r#type: "execute",
            body: self,
        })
    }
}

/// A named tensor with its description and its whole buffer in base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TensorPayload {
    /// The tensor's name in the operator's spec, e.g. `IndicesTensor`.
    pub name: String,
    /// Type, sizes, strides and buffer size.
    pub desc: TensorDesc,
    /// Base64 of the `desc.total_tensor_size_in_bytes` little-endian bytes of the buffer.
    pub data: String,
}

/// A message the backend writes to its stdout. Parsed with [`parse_reply`], a `result`
/// borrows its base64 from the line rather than copying it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply<'a> {
    /// The answer to `hello`.
    Hello(HelloReply),
    /// The outputs of a case.
    #[serde(borrow)]
    Result(ResultReply<'a>),
    /// Why a case (or the handshake) produced no outputs.
    Error(ErrorReply),
}

/// The body of the backend's `hello` reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelloReply {
    /// The protocol version the backend will speak (at most the one offered).
    pub protocol: u32,
    /// Short name, e.g. `onnxruntime`.
    pub name: String,
    /// The backend's own version.
    pub version: String,
    /// The device it runs on.
    pub device: String,
    /// The highest level claimed per family, e.g. `["4_1", "opset16"]`. Names opconform does
    /// not know are ignored.
    #[serde(default)]
    pub claims: Vec<String>,
    /// Operators implemented, e.g. `["DML_ONE_HOT", "OneHot-1"]`. Names opconform does not
    /// know are ignored.
    #[serde(default)]
    pub operators: Vec<String>,
}

impl HelloReply {
    /// The [`BackendInfo`] this reply describes; unknown level and operator names are dropped.
    pub fn info(&self) -> BackendInfo {
        BackendInfo {
            name: self.name.clone(),
            version: self.version.clone(),
            device: self.device.clone(),
            claims: self
                .claims
                .iter()
                .filter_map(|c| c.parse::<Level>().ok())
                .collect(),
            operators: self
                .operators
                .iter()
                .filter_map(|o| OperatorKind::from_name(o))
                .collect(),
        }
    }
}

/// The body of a `result` reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultReply<'a> {
    /// The id of the `execute` request answered.
    pub id: u64,
    /// Every output buffer, in the request's order and with its names.
    #[serde(borrow)]
    pub outputs: Vec<OutputData<'a>>,
}

/// One output buffer of a `result` reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputData<'a> {
    /// The output's name, as in the request.
    pub name: String,
    /// Base64 of the whole buffer, `total_tensor_size_in_bytes` long (borrowed from the line
    /// unless it holds JSON escapes).
    #[serde(borrow)]
    pub data: Cow<'a, str>,
}

/// Parses one reply line (as framed by [`super::framing::LineReader`]).
pub fn parse_reply(line: &str) -> serde_json::Result<Reply<'_>> {
    serde_json::from_str(line)
}

/// Checks a `result` against the outputs the request carried, given as `(name, size in
/// bytes)` in order, and decodes its buffers. The error says what is wrong: a missing, extra
/// or misnamed output, bad base64, or a buffer of the wrong length.
pub fn decode_outputs(
    result: &ResultReply<'_>,
    expected: &[(&str, u64)],
) -> Result<Vec<Vec<u8>>, String> {
    if result.outputs.len() != expected.len() {
        return Err(format!(
            "{} outputs returned, {} expected",
            result.outputs.len(),
            expected.len()
        ));
    }
    let mut buffers = Vec::with_capacity(expected.len());
    for (got, &(name, size)) in result.outputs.iter().zip(expected) {
        if got.name != name {
            return Err(format!(
                "output `{}` returned where `{name}` was expected",
                got.name
            ));
        }
        let bytes = decode_bytes(&got.data)
            .map_err(|e| format!("output `{}` is not valid base64: {e}", got.name))?;
        if bytes.len() as u64 != size {
            return Err(format!(
                "output `{}` holds {} bytes; its total_tensor_size_in_bytes is {size}",
                got.name,
                bytes.len()
            ));
        }
        buffers.push(bytes);
    }
    Ok(buffers)
}

/// The body of an `error` reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorReply {
    /// The id of the `execute` request answered; absent for a refused handshake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// `unsupported`, `invalid_argument` or `internal` (see [`ErrorKind`]).
    pub kind: String,
    /// Human-readable detail.
    #[serde(default)]
    pub message: String,
    /// For `invalid_argument`: the violated rule ids from `specs/`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
}

/// The kinds of `error` reply protocol v1 defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// `unsupported`: the backend lacks a type, rank or feature the case needs.
    Unsupported,
    /// `invalid_argument`: the descriptor is invalid at the requested level.
    InvalidArgument,
    /// `internal`: something failed inside the backend.
    Internal,
}

impl ErrorKind {
    /// The wire name, e.g. `invalid_argument`.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::Internal => "internal",
        }
    }

    /// Parses a wire name.
    pub fn from_name(name: &str) -> Option<ErrorKind> {
        [
            ErrorKind::Unsupported,
            ErrorKind::InvalidArgument,
            ErrorKind::Internal,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }
}

/// Standard base64 that accepts input with or without `=` padding.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Encodes bytes as standard, padded base64.
pub fn encode_bytes(bytes: &[u8]) -> String {
    BASE64.encode(bytes)
}

/// Decodes standard base64 (padding optional).
pub fn decode_bytes(text: &str) -> Result<Vec<u8>, String> {
    BASE64.decode(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use opconform_backend::{DataType, OneHotDesc};

    #[test]
    fn requests_have_the_documented_shape() {
        let hello = serde_json::to_string(&Request::Hello(HelloRequest { protocol: 1 })).unwrap();
        assert_eq!(hello, r#"{"type":"hello","protocol":1}"#);
        let shutdown = serde_json::to_string(&Request::Shutdown).unwrap();
        assert_eq!(shutdown, r#"{"type":"shutdown"}"#);

        let operator = OperatorDesc::OneHot(OneHotDesc {
            indices: TensorDesc::packed(DataType::Uint32, &[1, 1, 3, 1]),
            values: TensorDesc::packed(DataType::Float32, &[1, 1, 1, 2]),
            output: TensorDesc::packed(DataType::Float32, &[1, 1, 3, 4]),
            axis: 3,
        });
        let execute = ExecuteRequest {
            id: 7,
            level: Level::dml(0x4100),
            operator: operator.clone(),
            inputs: vec![TensorPayload {
                name: "IndicesTensor".into(),
                desc: TensorDesc::packed(DataType::Uint32, &[1, 1, 3, 1]),
                data: encode_bytes(&[0; 12]),
            }],
            outputs: vec![],
        };
        let request = Request::Execute(Box::new(execute.clone()));
        assert_eq!(
            execute.to_line().unwrap(),
            serde_json::to_string(&request).unwrap()
        );
        let value: serde_json::Value = serde_json::to_value(&request).unwrap();
        assert_eq!(value["type"], "execute");
        assert_eq!(value["id"], 7);
        assert_eq!(value["level"], "4_1");
        assert_eq!(value["operator"]["operator"], "DML_ONE_HOT");
        assert_eq!(value["operator"]["axis"], 3);
        assert_eq!(value["operator"]["indices"]["data_type"], "UINT32");
        assert_eq!(
            value["operator"]["indices"]["strides"],
            serde_json::Value::Null
        );
        assert_eq!(value["inputs"][0]["desc"]["total_tensor_size_in_bytes"], 12);
        assert_eq!(value["inputs"][0]["data"], "AAAAAAAAAAAAAAAA");
        let back: Request = serde_json::from_value(value).unwrap();
        assert_eq!(back, request);
    }

    #[test]
    fn replies_parse_leniently() {
        let hello: Reply = serde_json::from_str(
            r#"{"type":"hello","protocol":1,"name":"x","version":"1","device":"cpu",
                "claims":["4_1","opset16","webnn9"],"operators":["DML_ARGMAX","FUTURE_OP"],
                "extra":true}"#,
        )
        .unwrap();
        let Reply::Hello(hello) = hello else {
            panic!("not a hello: {hello:?}")
        };
        let info = hello.info();
        assert_eq!(info.claims, vec![Level::dml(0x4100), Level::Opset(16)]);
        assert_eq!(info.operators, vec![OperatorKind::DmlArgMax]);

        let error: Reply =
            serde_json::from_str(r#"{"type":"error","id":3,"kind":"unsupported","message":"m"}"#)
                .unwrap();
        assert_eq!(
            error,
            Reply::Error(ErrorReply {
                id: Some(3),
                kind: "unsupported".into(),
                message: "m".into(),
                rules: vec![],
            })
        );
        assert!(serde_json::from_str::<Reply>(r#"{"type":"bogus"}"#).is_err());
        assert_eq!(
            ErrorKind::from_name("invalid_argument"),
            Some(ErrorKind::InvalidArgument)
        );
        assert_eq!(ErrorKind::from_name("fatal"), None);
    }

    #[test]
    fn result_data_is_borrowed_from_the_line() {
        // A reply's base64 is most of its line: copying it would double the memory a large
        // case needs.
        let line = r#"{"type":"result","id":1,"outputs":[{"name":"O","data":"AQI="}]}"#;
        let Reply::Result(result) = parse_reply(line).unwrap() else {
            panic!("not a result")
        };
        assert!(matches!(result.outputs[0].data, Cow::Borrowed("AQI=")));
        assert_eq!(
            decode_outputs(&result, &[("O", 2)]).unwrap(),
            vec![vec![1, 2]]
        );
        // Escapes are legal JSON; the data is then copied.
        let line = r#"{"type":"result","id":1,"outputs":[{"name":"O","data":"AQI\u003d"}]}"#;
        let Reply::Result(result) = parse_reply(line).unwrap() else {
            panic!("not a result")
        };
        assert_eq!(
            decode_outputs(&result, &[("O", 2)]).unwrap(),
            vec![vec![1, 2]]
        );
    }

    #[test]
    fn decode_outputs_names_what_is_wrong() {
        let result = |outputs: &[(&str, &'static str)]| ResultReply {
            id: 1,
            outputs: outputs
                .iter()
                .map(|&(name, data)| OutputData {
                    name: name.into(),
                    data: Cow::Borrowed(data),
                })
                .collect(),
        };
        let expected = [("A", 2), ("B", 1)];
        let error = |outputs| decode_outputs(&result(outputs), &expected).unwrap_err();
        assert_eq!(error(&[("A", "AQI=")]), "1 outputs returned, 2 expected");
        assert_eq!(
            error(&[("A", "AQI="), ("C", "AQ==")]),
            "output `C` returned where `B` was expected"
        );
        assert!(error(&[("A", "A*"), ("B", "AQ==")]).contains("output `A` is not valid base64"));
        assert_eq!(
            error(&[("A", "AQ=="), ("B", "AQ==")]),
            "output `A` holds 1 bytes; its total_tensor_size_in_bytes is 2"
        );
        assert_eq!(
            decode_outputs(&result(&[("A", "AQI="), ("B", "Bw==")]), &expected).unwrap(),
            vec![vec![1, 2], vec![7]]
        );
    }

    #[test]
    fn base64_accepts_missing_padding() {
        assert_eq!(encode_bytes(&[1, 2]), "AQI=");
        assert_eq!(decode_bytes("AQI=").unwrap(), vec![1, 2]);
        assert_eq!(decode_bytes("AQI").unwrap(), vec![1, 2]);
        assert!(decode_bytes("A*").is_err());
    }
}
