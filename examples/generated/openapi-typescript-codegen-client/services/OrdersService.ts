/* generated using openapi-typescript-codegen -- do not edit */
/* istanbul ignore file */
/* tslint:disable */
/* eslint-disable */
import type { Echo } from '../models/Echo';
import type { NewOrder } from '../models/NewOrder';
import type { OrderEcho } from '../models/OrderEcho';
import type { CancelablePromise } from '../core/CancelablePromise';
import type { BaseHttpRequest } from '../core/BaseHttpRequest';
export class OrdersService {
  constructor(public readonly httpRequest: BaseHttpRequest) {}
  /**
   * @returns Echo The orders, as the emulator echoes the request.
   * @throws ApiError
   */
  public listOrders({
    status,
  }: {
    status?: 'open' | 'shipped',
  }): CancelablePromise<Echo> {
    return this.httpRequest.request({
      method: 'GET',
      url: '/api/v1/orders',
      query: {
        'status': status,
      },
    });
  }
  /**
   * @returns OrderEcho The order created, as the emulator echoes the request with its body.
   * @throws ApiError
   */
  public createOrder({
    requestBody,
  }: {
    requestBody: NewOrder,
  }): CancelablePromise<OrderEcho> {
    return this.httpRequest.request({
      method: 'POST',
      url: '/api/v1/orders',
      body: requestBody,
      mediaType: 'application/json',
    });
  }
  /**
   * @returns Echo The order, as the emulator echoes the request.
   * @throws ApiError
   */
  public getOrder({
    orderId,
  }: {
    orderId: string,
  }): CancelablePromise<Echo> {
    return this.httpRequest.request({
      method: 'GET',
      url: '/api/v1/orders/{orderId}',
      path: {
        'orderId': orderId,
      },
      errors: {
        404: `No such order.`,
      },
    });
  }
}
