import CSqlCipherBridge
import Foundation

// The C callbacks of the SQL functions and collations written in Swift.
//
// Each registration hands SQLite a retained box (its `pApp`); SQLite passes it back to every call
// (`sqlite3_user_data`) and releases it through the destroy callback when the function is
// replaced or deleted, when the connection closes, or when the registration fails. The callbacks
// run on the connection's thread inside `sqlite3_step`. None of them can let a Swift error or a
// bad value escape into SQLite: every failure becomes `sqlite3_result_error` with a message.

/// What SQLite keeps for one function on one connection.
final class FunctionBox {
    let name: String
    let body: DatabaseFunction.Body
    /// Whether the schema may not call the function (no `allowedInSchema`).
    let isDirectOnly: Bool
    let calls: FunctionCallState

    init(_ function: DatabaseFunction, calls: FunctionCallState) {
        self.name = function.name
        self.body = function.body
        self.isDirectOnly = !function.isAllowedInSchema
        self.calls = calls
    }

    /// Fails the call with `error`'s description, and keeps it for the statement's typed error.
    func fail(_ context: OpaquePointer, with error: any Error) {
        let message = FunctionCall.message(of: error)
        calls.failure = (.functionFailed(name: name, message: message, sql: "").redactingSQL(), message)
        FunctionCall.setError(message, on: context)
    }

    /// On SQLite before 3.30, which ignores `SQLITE_DIRECTONLY`: fails the call and returns false
    /// unless the statement being stepped names the function in its own text, so the schema of a
    /// file (a `DEFAULT`, a `CHECK`, an index) cannot call it on its own.
    func allowsCall(_ context: OpaquePointer) -> Bool {
        guard isDirectOnly, calls.enforcesDirectOnly else { return true }
        if let running = calls.running, running.callsDirectly(name) { return true }
        let message = "\(name)() may only be called from SQL you run yourself, not from the database's schema"
        calls.failure = (.functionNotAllowedInSchema(name: name, sql: "").redactingSQL(), message)
        FunctionCall.setError(message, on: context)
        return false
    }
}

/// An aggregate's state for one group, kept in SQLite's aggregate context between rows.
final class AccumulatorHolder {
    let accumulator: any AggregateAccumulator
    /// Set when a step failed: the result is then not asked for.
    var failed = false

    init(_ accumulator: any AggregateAccumulator) {
        self.accumulator = accumulator
    }
}

/// What SQLite keeps for one collation on one connection.
final class CollationBox {
    let compare: @Sendable (String, String) -> ComparisonResult

    init(_ collation: DatabaseCollation) {
        self.compare = collation.compare
    }
}

enum FunctionCall {
    /// The arguments of a call, as the package reads values everywhere: text that is not valid
    /// UTF-8 becomes a blob of its bytes (see ``DatabaseValue``).
    static func arguments(_ count: Int32, _ values: UnsafeMutablePointer<OpaquePointer?>?) -> [DatabaseValue] {
        guard count > 0, let values else { return [] }
        return (0..<Int(count)).map { value(values[$0]) }
    }

    static func value(_ value: OpaquePointer?) -> DatabaseValue {
        guard let value else { return .null }
        switch scb_value_type(value) {
        case 1: return .integer(scb_value_int64(value))
        case 2: return .real(scb_value_double(value))
        case 3:
            guard let text = scb_value_text(value) else { return .text("") }
            let bytes = UnsafeBufferPointer(start: text, count: Int(max(0, scb_value_bytes(value))))
            if let valid = String(validating: bytes, as: UTF8.self) { return .text(valid) }
            return .blob(Data(buffer: bytes))
        case 4:
            let pointer = scb_value_blob(value)
            let count = Int(max(0, scb_value_bytes(value)))
            guard count > 0, let pointer else { return .blob(Data()) }
            return .blob(Data(bytes: pointer, count: count))
        default:
            return .null
        }
    }

    /// Sets the call's result. Text or a blob longer than SQLite's API can take fails the call
    /// with `SQLITE_TOOBIG` (SQLite applies its own, smaller, length limit after that).
    static func setResult(_ value: DatabaseValue, on context: OpaquePointer) {
        switch value {
        case .null:
            scb_result_null(context)
        case .integer(let int):
            scb_result_int64(context, int)
        case .real(let double):
            scb_result_double(context, double)
        case .text(var text):
            text.withUTF8 { utf8 in
                guard utf8.count <= Int(Int32.max) else { return scb_result_error_toobig(context) }
                utf8.withMemoryRebound(to: CChar.self) { scb_result_text(context, $0.baseAddress, Int32(utf8.count)) }
            }
        case .blob(let data):
            data.withUnsafeBytes { bytes in
                guard bytes.count <= Int(Int32.max) else { return scb_result_error_toobig(context) }
                scb_result_blob(context, bytes.baseAddress, Int32(bytes.count))
            }
        }
    }

    static func setError(_ message: String, on context: OpaquePointer) {
        var message = message
        message.withUTF8 { utf8 in
            utf8.withMemoryRebound(to: CChar.self) { scb_result_error(context, $0.baseAddress, Int32(clamping: utf8.count)) }
        }
    }

    /// The text an error gives SQLite and the typed error.
    static func message(of error: any Error) -> String {
        if let error = error as? LocalizedError, let description = error.errorDescription { return description }
        return String(describing: error)
    }
}

/// `xFunc` of every scalar function.
func sqlFunctionCall(_ context: OpaquePointer?, _ count: Int32, _ values: UnsafeMutablePointer<OpaquePointer?>?) {
    guard let context, let app = scb_user_data(context) else { return }
    let box = Unmanaged<FunctionBox>.fromOpaque(app).takeUnretainedValue()
    guard case .scalar(let function) = box.body, box.allowsCall(context) else { return }
    do {
        FunctionCall.setResult(try function(FunctionCall.arguments(count, values)), on: context)
    } catch {
        box.fail(context, with: error)
    }
}

/// `xStep` of every aggregate.
func sqlAggregateStep(_ context: OpaquePointer?, _ count: Int32, _ values: UnsafeMutablePointer<OpaquePointer?>?) {
    guard let context, let app = scb_user_data(context) else { return }
    let box = Unmanaged<FunctionBox>.fromOpaque(app).takeUnretainedValue()
    guard case .aggregate(let make) = box.body, box.allowsCall(context) else { return }
    let size = Int32(MemoryLayout<UnsafeMutableRawPointer?>.size)
    guard let memory = scb_aggregate_context(context, size) else { return scb_result_error_nomem(context) }
    let slot = memory.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
    let holder: AccumulatorHolder
    if let existing = slot.pointee {
        holder = Unmanaged<AccumulatorHolder>.fromOpaque(existing).takeUnretainedValue()
    } else {
        holder = AccumulatorHolder(make())
        // Released by the final step, which SQLite always runs for an allocated context (also
        // when the statement fails or is reset before its end).
        slot.pointee = Unmanaged.passRetained(holder).toOpaque()
    }
    guard !holder.failed else { return }
    do {
        try holder.accumulator.step(FunctionCall.arguments(count, values))
    } catch {
        holder.failed = true
        box.fail(context, with: error)
    }
}

/// `xFinal` of every aggregate.
func sqlAggregateFinal(_ context: OpaquePointer?) {
    guard let context, let app = scb_user_data(context) else { return }
    let box = Unmanaged<FunctionBox>.fromOpaque(app).takeUnretainedValue()
    guard case .aggregate(let make) = box.body else { return }
    let holder: AccumulatorHolder
    // Size 0: the context of this group if a step allocated one, without allocating.
    if let memory = scb_aggregate_context(context, 0),
       let stored = memory.assumingMemoryBound(to: UnsafeMutableRawPointer?.self).pointee {
        memory.assumingMemoryBound(to: UnsafeMutableRawPointer?.self).pointee = nil
        holder = Unmanaged<AccumulatorHolder>.fromOpaque(stored).takeRetainedValue()
    } else {
        // An empty group: no step ran.
        guard box.allowsCall(context) else { return }
        holder = AccumulatorHolder(make())
    }
    guard !holder.failed else { return }
    do {
        FunctionCall.setResult(try holder.accumulator.result(), on: context)
    } catch {
        box.fail(context, with: error)
    }
}

/// `xDestroy` of every function.
func sqlFunctionRelease(_ app: UnsafeMutableRawPointer?) {
    guard let app else { return }
    Unmanaged<FunctionBox>.fromOpaque(app).release()
}

/// `xCompare` of every collation: the closure's order, with texts that it finds equal but that
/// are not valid UTF-8 ordered by their bytes, so that the order stays total.
func sqlCollationCompare(_ app: UnsafeMutableRawPointer?, _ leftCount: Int32, _ left: UnsafeRawPointer?,
                         _ rightCount: Int32, _ right: UnsafeRawPointer?) -> Int32 {
    guard let app else { return 0 }
    let box = Unmanaged<CollationBox>.fromOpaque(app).takeUnretainedValue()
    let leftBytes = UnsafeRawBufferPointer(start: left, count: left == nil ? 0 : Int(max(0, leftCount)))
    let rightBytes = UnsafeRawBufferPointer(start: right, count: right == nil ? 0 : Int(max(0, rightCount)))
    let leftText = String(validating: leftBytes.bindMemory(to: UInt8.self), as: UTF8.self)
    let rightText = String(validating: rightBytes.bindMemory(to: UInt8.self), as: UTF8.self)
    switch box.compare(leftText ?? String(decoding: leftBytes, as: UTF8.self),
                       rightText ?? String(decoding: rightBytes, as: UTF8.self)) {
    case .orderedAscending: return -1
    case .orderedDescending: return 1
    case .orderedSame:
        guard leftText == nil || rightText == nil else { return 0 }
        let common = min(leftBytes.count, rightBytes.count)
        if common > 0, let left, let right {
            let order = memcmp(left, right, common)
            if order != 0 { return order < 0 ? -1 : 1 }
        }
        return leftBytes.count == rightBytes.count ? 0 : (leftBytes.count < rightBytes.count ? -1 : 1)
    }
}

/// `xDestroy` of every collation.
func sqlCollationRelease(_ app: UnsafeMutableRawPointer?) {
    guard let app else { return }
    Unmanaged<CollationBox>.fromOpaque(app).release()
}

extension Statement {
    /// Whether the statement's own text calls the function `name` (a name followed by `(`), as
    /// opposed to a call that comes from the schema. Found once per name.
    func callsDirectly(_ name: String) -> Bool {
        let folded = FunctionKey.fold(name)
        if let known = directCalls[folded] { return known }
        var found = false
        if let tokens = SQLTokenizer.tokenize(sql) {
            for index in tokens.indices.dropLast() where tokens[index + 1].isSymbol("(") {
                let token = tokens[index]
                guard token.kind == .word || token.kind == .quotedIdentifier, let identifier = token.identifier else { continue }
                if FunctionKey.fold(identifier) == folded {
                    found = true
                    break
                }
            }
        }
        directCalls[folded] = found
        return found
    }
}
