/* generated using openapi-typescript-codegen -- do not edit */
/* istanbul ignore file */
/* tslint:disable */
/* eslint-disable */
export { OrdersClient } from './OrdersClient';

export { ApiError } from './core/ApiError';
export { BaseHttpRequest } from './core/BaseHttpRequest';
export { CancelablePromise, CancelError } from './core/CancelablePromise';
export { OpenAPI } from './core/OpenAPI';
export type { OpenAPIConfig } from './core/OpenAPI';

export type { Echo } from './models/Echo';
export type { NewOrder } from './models/NewOrder';
export type { OrderEcho } from './models/OrderEcho';
export type { Problem } from './models/Problem';

export { OrdersService } from './services/OrdersService';
