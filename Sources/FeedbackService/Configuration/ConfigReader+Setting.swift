public import Configuration

/// Reading a setting's value: the flag, else the environment, else the setting's default. Values were checked by
/// `ConfigurationCheck` before the server starts; a value that does not parse here falls back to the default.
extension ConfigReader {
    /// The value of an integer setting.
    public func int(_ setting: Setting) -> Int {
        int(forKey: ConfigKey(setting.key), default: Int(setting.defaultValue) ?? 0)
    }

    /// The value of a text or choice setting.
    public func string(_ setting: Setting) -> String {
        string(forKey: ConfigKey(setting.key), default: setting.defaultValue)
    }

    /// The value of a boolean setting.
    public func bool(_ setting: Setting) -> Bool {
        bool(forKey: ConfigKey(setting.key), default: setting.defaultValue == "true")
    }

    /// The value of a list setting, empty items dropped.
    public func list(_ setting: Setting) -> [String] {
        let fallback = setting.defaultValue.split(separator: ",").map(String.init)
        return stringArray(forKey: ConfigKey(setting.key), default: fallback).filter { !$0.isEmpty }
    }
}
