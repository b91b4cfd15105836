//! Feature levels (DirectML) and opsets (OpenVINO): what a case requires and a backend claims.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// A DirectML feature level (`DML_FEATURE_LEVEL_x_y`), ordered by value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FeatureLevel(u16);

impl FeatureLevel {
    /// Every defined DirectML feature level, lowest first (values from `DML_FEATURE_LEVEL`).
    pub const ALL: [FeatureLevel; 15] = [
        FeatureLevel(0x1000),
        FeatureLevel(0x2000),
        FeatureLevel(0x2100),
        FeatureLevel(0x3000),
        FeatureLevel(0x3100),
        FeatureLevel(0x4000),
        FeatureLevel(0x4100),
        FeatureLevel(0x5000),
        FeatureLevel(0x5100),
        FeatureLevel(0x5200),
        FeatureLevel(0x6000),
        FeatureLevel(0x6100),
        FeatureLevel(0x6200),
        FeatureLevel(0x6300),
        FeatureLevel(0x6400),
    ];

    /// The numeric value of `DML_FEATURE_LEVEL_x_y`, e.g. `0x4100` for 4_1.
    pub fn value(self) -> u16 {
        self.0
    }

    /// Builds a level from its numeric value, if it is a defined level.
    pub fn from_value(value: u16) -> Option<FeatureLevel> {
        FeatureLevel::ALL.into_iter().find(|l| l.0 == value)
    }

    /// Major and minor parts, e.g. `(4, 1)`.
    pub fn major_minor(self) -> (u8, u8) {
        ((self.0 >> 12) as u8, ((self.0 >> 8) & 0xf) as u8)
    }
}

impl fmt::Display for FeatureLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (major, minor) = self.major_minor();
        write!(f, "{major}_{minor}")
    }
}

/// The specification family a case or a backend claim belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SpecFamily {
    /// DirectML, versioned by feature level.
    Directml,
    /// OpenVINO, versioned by opset.
    Openvino,
}

impl fmt::Display for SpecFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SpecFamily::Directml => "directml",
            SpecFamily::Openvino => "openvino",
        })
    }
}

/// A point on a spec family's version axis: a DirectML feature level or an OpenVINO opset.
///
/// Written `4_1` (or `DML_FEATURE_LEVEL_4_1`) and `opset1` in YAML and on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// `DML_FEATURE_LEVEL_x_y`.
    Dml(FeatureLevel),
    /// OpenVINO opset N.
    Opset(u32),
}

impl Level {
    /// The family this level belongs to.
    pub fn family(self) -> SpecFamily {
        match self {
            Level::Dml(_) => SpecFamily::Directml,
            Level::Opset(_) => SpecFamily::Openvino,
        }
    }

    /// Shorthand for a DirectML level from its value, e.g. `Level::dml(0x3000)`.
    ///
    /// # Panics
    /// If `value` is not a defined feature level (a programming error).
    pub fn dml(value: u16) -> Level {
        Level::Dml(FeatureLevel::from_value(value).expect("defined DirectML feature level"))
    }

    /// True when both levels are of one family and `self` is at or above `other`.
    pub fn at_least(self, other: Level) -> bool {
        self.family() == other.family() && self >= other
    }
}

/// Why a level string did not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelParseError(pub String);

impl fmt::Display for LevelParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a level: expected a DirectML feature level such as `4_1` or \
             `DML_FEATURE_LEVEL_4_1`, or an OpenVINO opset such as `opset1`",
            self.0
        )
    }
}

impl std::error::Error for LevelParseError {}

impl FromStr for Level {
    type Err = LevelParseError;

    fn from_str(text: &str) -> Result<Level, LevelParseError> {
        let fail = || LevelParseError(text.to_string());
        if let Some(n) = text.strip_prefix("opset") {
            let n: u32 = n.parse().map_err(|_| fail())?;
            return if n >= 1 {
                Ok(Level::Opset(n))
            } else {
                Err(fail())
            };
        }
        let short = text.strip_prefix("DML_FEATURE_LEVEL_").unwrap_or(text);
        let (major, minor) = short.split_once('_').ok_or_else(fail)?;
        let major: u16 = major.parse().map_err(|_| fail())?;
        let minor: u16 = minor.parse().map_err(|_| fail())?;
        if major > 15 || minor > 15 {
            return Err(fail());
        }
        FeatureLevel::from_value((major << 12) | (minor << 8))
            .map(Level::Dml)
            .ok_or_else(fail)
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Level::Dml(level) => write!(f, "{level}"),
            Level::Opset(n) => write!(f, "opset{n}"),
        }
    }
}

impl Serialize for Level {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Level {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Level, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_short_and_long_names() {
        assert_eq!("4_1".parse::<Level>().unwrap(), Level::dml(0x4100));
        assert_eq!(
            "DML_FEATURE_LEVEL_2_0".parse::<Level>().unwrap(),
            Level::dml(0x2000)
        );
        assert_eq!("opset3".parse::<Level>().unwrap(), Level::Opset(3));
        assert!("4_2".parse::<Level>().is_err());
        assert!("opset0".parse::<Level>().is_err());
        assert!("four".parse::<Level>().is_err());
    }

    #[test]
    fn orders_by_value_and_compares_within_family() {
        assert!(Level::dml(0x3000) < Level::dml(0x3100));
        assert!(Level::dml(0x4100).at_least(Level::dml(0x2100)));
        assert!(!Level::Opset(5).at_least(Level::dml(0x2000)));
        assert_eq!(Level::dml(0x6400).to_string(), "6_4");
    }
}
