// The proxy: durable tasks in front of any MCP server (`mcp-tasks proxy`).
export { createProxyServerFactory } from './createProxyServer.js';
export { createProxyWork, upstreamTaskOf, UPSTREAM_TASK_META } from './createProxyWork.js';
export { bridgedRecovery } from './bridgedRecovery.js';
export { forwardToolCall, type CallOutcome, type ForwardHooks, type UpstreamTaskRef } from './forwardToolCall.js';
export { parseProxyConfig, toolRulesOf, type ProxyConfig, type UpstreamSettings } from './ProxyConfig.js';
export { startProxy, type ProxyOptions, type RunningProxy } from './startProxy.js';
export { globToRegExp, parseToolsOption, ToolPolicies, type ProxyToolSettings, type ToolRule } from './toolPolicies.js';
export { Upstream, type UpstreamOptions } from './Upstream.js';
export { UpstreamPool, UpstreamBusyError, type UpstreamLease, type UpstreamPoolOptions } from './UpstreamPool.js';
export { CallAdmission, CallRefusedError, type CallAdmissionOptions } from './CallAdmission.js';
export { ConcurrencyGate } from './ConcurrencyGate.js';
export { upstreamEnvironment } from './upstreamEnvironment.js';
export type { InputAnswer, InputRequest, InputRoute } from './InputRoute.js';
